/**
 * `GET /language`: the words of the language, from the engine's own catalogues, for editors
 * (the console completes and highlights with them): commands, sources, functions (with their
 * arity and whether they aggregate), PARSE matchers and keywords.
 */

import { Hono } from "hono";
import { languageWords } from "../engine/mod.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export function languageRoutes(): Hono<AppEnv> {
  const body = languageWords();
  return new Hono<AppEnv>().get("/language", (c) => sendJson(c, body));
}
