/**
 * One log line per request: method, path (never the query string, which may carry script
 * arguments), status, duration, the user's name (never the token) and the client's address.
 *
 * The address is the one the server was handed with the request (`Deno.ServeHandlerInfo`'s
 * `remoteAddr`): behind the front (routes/guarded_server.ts) the TCP peer the front accepted,
 * carried over in the front's own `Trawl-Client-Address` header (a client's is dropped); under
 * `deno serve` (edge.ts) the peer itself. Never a header a client wrote.
 *
 *   GET /API/v1.0/whoami 200 3ms alice 203.0.113.7
 */

import type { Context } from "hono";
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
        `${c.req.method} ${c.req.path} ${c.res.status} ${millis}ms ${user ? user.name : "-"} ${
          clientAddress(c)
        }`,
      );
    }
  });
}

/** The peer's address the server was handed, or "-" (a request made in-process, by a test). */
function clientAddress(c: Context<AppEnv>): string {
  const info = c.env as { remoteAddr?: Deno.Addr } | undefined;
  const addr = info?.remoteAddr;
  return addr && "hostname" in addr && addr.hostname !== "" ? addr.hostname : "-";
}
