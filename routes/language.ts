/**
 * `GET /language`: the words of the language, from the engine's own catalogues, for editors
 * (the console completes and highlights with them): commands, sources, functions (with their
 * arity and whether they aggregate), PARSE matchers and keywords, and `help`: a signature and a
 * one-line description of each command, source, function and matcher (engine/language_help.ts),
 * which the console shows in completion and on hover.
 */

import { Hono } from "hono";
import { languageWords } from "../engine/mod.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export function languageRoutes(): Hono<AppEnv> {
  const body = languageWords();
  return new Hono<AppEnv>().get("/language", (c) => sendJson(c, body));
}
