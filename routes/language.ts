/**
 * `GET /language`: the words of the language, from the engine's own catalogues, for editors
 * (the console completes and highlights with them): commands, sources, functions (with their
 * arity and whether they aggregate), PARSE matchers and keywords.
 */

import { Hono } from "hono";
import { FUNCTION_CATALOG } from "../engine/front/checker_catalog.ts";
import { KEYWORDS } from "../engine/front/lexer.ts";
import { COMMANDS } from "../engine/front/parser.ts";
import { MATCHER_NAMES } from "../engine/pattern/parse_pattern.ts";
import { SOURCE_NAMES } from "../engine/front/source_catalog.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export function languageRoutes(): Hono<AppEnv> {
  const body = {
    commands: Object.values(COMMANDS).flatMap((c) => c.names),
    sources: SOURCE_NAMES,
    functions: FUNCTION_CATALOG.map((f) => ({
      name: f.name,
      minArgs: f.minArgs,
      maxArgs: Number.isFinite(f.maxArgs) ? f.maxArgs : null,
      aggregate: f.aggregate,
    })),
    matchers: MATCHER_NAMES,
    keywords: [...KEYWORDS],
  };
  return new Hono<AppEnv>().get("/language", (c) => sendJson(c, body));
}
