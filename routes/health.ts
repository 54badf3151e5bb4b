/** `GET /healthz`: liveness for load balancers; needs no token and tells nothing else. */

import { Hono } from "hono";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export function healthRoutes(): Hono<AppEnv> {
  return new Hono<AppEnv>().get("/healthz", (c) => sendJson(c, { status: "ok" }));
}
