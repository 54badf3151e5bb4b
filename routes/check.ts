/**
 * `POST /check?scriptPath=<dir>` with a script in the body: every mistake found without running
 * it, and the result's schema, for editors that call it at every pause in typing
 * (docs/api.md). Nothing is run, queued or kept.
 */

import { Hono } from "hono";
import { checkScript } from "../actors/submission.ts";
import { schemaToJson } from "../engine/mod.ts";
import { badRequest } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { queryContext, type QueryDeps, readScript, requireDirectory } from "./query_request.ts";
import { CONTRACTS, validated } from "./contract.ts";

export function checkRoutes(deps: QueryDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/check", validated(CONTRACTS.check), async (c) => {
    const user = c.get("user");
    const scriptPath = c.req.query("scriptPath") ?? "/user";
    const resolved = deps.tree.resolve(user, scriptPath);
    await requireDirectory(deps.tree, user, resolved);
    const text = await readScript(c, deps.settings["query.maxScriptBytes"]);
    if (text === null) throw badRequest("BAD_PARAMETER", "POST /check needs a script in the body");
    const checked = await checkScript(text, queryContext(deps, user, resolved.canonical, {}));
    return sendJson(c, {
      ok: checked.ok,
      diagnostics: checked.diagnostics,
      schema: checked.schema && schemaToJson(checked.schema),
    });
  });
  return app;
}
