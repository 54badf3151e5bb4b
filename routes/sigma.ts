/**
 * Sigma rules (docs/detections.md):
 *
 * - `POST /sigma/convert`: one or more YAML documents in the body (or JSON `{"rules": text}`);
 *   `?target=graph|archive|suite` and `?store=<name>` optional. Answers `{"rules": [...]}`, per
 *   rule its metadata, target, sources, Trawl script and fields as mapped, or a typed `reason`.
 * - `POST /sigma/test`: JSON `{"rule": yaml, "records": [...], "target"?, "store"?}`: the
 *   conversion and the records that match, each with the record paths that did.
 * - `GET /sigma/mappings`: the field mappings in effect and where each comes from.
 *
 * They read nothing of the user's data: any user with a token may use them. Bodies over 1 MiB
 * are `413 PAYLOAD_TOO_LARGE`; a mapping file that is not valid, `409 BAD_MAPPING` naming it.
 */

import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import type { ResourceTree } from "../engine/mod.ts";
import {
  convertSigma,
  MappingError,
  matchRecords,
  shown,
  sigmaMappings,
} from "../actors/sigma_rules.ts";
import { ApiError, badRequest } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export const MAX_SIGMA_BYTES = 1024 * 1024;

const TARGET = z.string().regex(/^[a-z0-9_-]{1,64}$/).optional();
const STORE = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional();

const TestRequest = z.object({
  rule: z.string().max(MAX_SIGMA_BYTES),
  records: z.array(z.unknown()).max(10_000),
  target: TARGET,
  store: STORE,
}).strict();

function limit(what: string) {
  return bodyLimit({
    maxSize: MAX_SIGMA_BYTES,
    onError: () => {
      throw new ApiError(
        413,
        "PAYLOAD_TOO_LARGE",
        `${what} takes a body of at most ${MAX_SIGMA_BYTES} bytes`,
      );
    },
  });
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof MappingError) throw new ApiError(409, "BAD_MAPPING", e.message);
    throw e;
  }
}

function param(schema: typeof TARGET, value: string | undefined, name: string) {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw badRequest("BAD_PARAMETER", `'${name}' is not a valid name`);
  return parsed.data;
}

export function sigmaRoutes(tree: ResourceTree): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/sigma/convert", limit("POST /sigma/convert"), async (c) => {
    const raw = await c.req.text();
    let text = raw;
    if ((c.req.header("Content-Type") ?? "").startsWith("application/json")) {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw badRequest("BAD_PARAMETER", "the JSON body is not JSON");
      }
      const rules = (body as { rules?: unknown } | null)?.rules;
      if (typeof rules !== "string") {
        throw badRequest("BAD_PARAMETER", 'a JSON body is {"rules": "<YAML text>"}');
      }
      text = rules;
    }
    if (text.trim() === "") throw badRequest("BAD_PARAMETER", "the body holds no rule");
    const target = param(TARGET, c.req.query("target"), "target");
    const store = param(STORE, c.req.query("store"), "store");
    const rules = await guarded(() => convertSigma(tree, { text, target, store }));
    return sendJson(c, { rules: rules.map(shown) });
  });
  app.post("/sigma/test", limit("POST /sigma/test"), async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw badRequest("BAD_PARAMETER", "POST /sigma/test needs a JSON body");
    }
    const parsed = TestRequest.safeParse(body);
    if (!parsed.success) {
      throw badRequest(
        "BAD_PARAMETER",
        `POST /sigma/test needs {"rule": string, "records": [at most 10000], "target"?, "store"?}: ${
          parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")
        }`,
      );
    }
    const { rule, records, target, store } = parsed.data;
    const rules = await guarded(() => convertSigma(tree, { text: rule, target, store }));
    if (rules.length !== 1) {
      throw badRequest("BAD_PARAMETER", `POST /sigma/test takes one rule, not ${rules.length}`);
    }
    const conversion = rules[0]!;
    const matches = conversion.ok ? matchRecords(conversion, records) : [];
    return sendJson(c, { rule: shown(conversion), matches });
  });
  app.get("/sigma/mappings", async (c) => {
    const mappings = await guarded(() => sigmaMappings(tree));
    return sendJson(c, { mappings: mappings.map(({ mapping, from }) => ({ from, ...mapping })) });
  });
  return app;
}
