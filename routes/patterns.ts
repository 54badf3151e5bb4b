/**
 * `POST /patterns/try` with `{"pattern", "lines": [...]}`: what a PARSE pattern extracts from
 * each sample line, for developing a pattern as one types (the console's pattern pane):
 * `200 {"ok": true, "fields": {name: type}, "lines": [{"row": {...} | null, "spans", "stop"}]}`
 * (`spans`: where each field's text lies in the line, `{name: [start, end]}`; `stop`: for a line
 * that does not match, `{"at", "element": {"offset", "text"}}`, the offset in the line where
 * matching stopped and the pattern element that failed there), or `{"ok": false, "message",
 * "offset"}` when the pattern itself is wrong. Nothing is read or kept.
 * A body over 1 MiB is `413 PAYLOAD_TOO_LARGE`, from its Content-Length before it is read.
 */

import { Hono } from "hono";
import { z } from "zod";
import { schemaToJson, tryPattern } from "../engine/mod.ts";
import type { Settings } from "../home/settings.ts";
import { bodyLimit } from "hono/body-limit";
import { ApiError, badRequest } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { queryZone } from "./query_request.ts";
import { rowWriter } from "./result_body.ts";

/** The largest body read: samples typed or pasted into the console's pattern pane. */
export const MAX_TRY_BYTES = 1024 * 1024;

const TryRequest = z.object({
  pattern: z.string().max(64 * 1024),
  lines: z.array(z.string().max(64 * 1024)).max(1000),
});

export function patternRoutes(settings: Settings): Hono<AppEnv> {
  const limit = bodyLimit({
    maxSize: MAX_TRY_BYTES,
    onError: () => {
      throw new ApiError(
        413,
        "PAYLOAD_TOO_LARGE",
        `POST /patterns/try takes a body of at most ${MAX_TRY_BYTES} bytes`,
      );
    },
  });
  return new Hono<AppEnv>().post("/patterns/try", limit, async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw badRequest("BAD_PARAMETER", "POST /patterns/try needs a JSON body");
    }
    const parsed = TryRequest.safeParse(body);
    if (!parsed.success) {
      throw badRequest(
        "BAD_PARAMETER",
        `POST /patterns/try needs {"pattern": string, "lines": [string, at most 1000]}: ${
          parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")
        }`,
      );
    }
    const zone = queryZone(c.get("user"), settings);
    const trial = tryPattern(parsed.data.pattern, parsed.data.lines, zone);
    if (!trial.ok) return sendJson(c, { ok: false, message: trial.message, offset: trial.offset });
    const write = rowWriter(
      { mediaType: "application/x-ndjson", options: { omitHeader: false } },
      trial.fields.map((f) => f.name),
      zone,
    );
    const lines = trial.lines.map((l) => ({
      row: l.row === null ? null : JSON.parse(write(l.row)),
      spans: l.spans,
      stop: l.stop,
    }));
    return sendJson(c, { ok: true, fields: schemaToJson(trial.fields), lines });
  });
}
