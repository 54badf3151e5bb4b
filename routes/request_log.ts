/**
 * One log line per request: method, path (never the query string, which may carry script
 * arguments), status, duration and the user's name (never the token).
 */

import { createMiddleware } from "hono/factory";
import type { Logger } from "../home/log.ts";
import type { AppEnv } from "./env.ts";

export function requestLog(log: Logger) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      const millis = Math.round(performance.now() - start);
      const user = c.get("user") as { name: string } | undefined;
      log.info(
        `${c.req.method} ${c.req.path} ${c.res.status} ${millis}ms ${user ? user.name : "-"}`,
      );
    }
  });
}
