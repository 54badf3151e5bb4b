/**
 * The web console (console/, docs/console.md): its page, script and style, embedded in the
 * program by `deno task console` (routes/console_assets.ts), served without a token under a
 * strict Content-Security-Policy. The console itself talks to /API/v1.0 with the token the
 * person signs in with.
 */

import { Hono } from "hono";
import { CONSOLE_ASSETS } from "./console_assets.ts";
import type { AppEnv } from "./env.ts";

/** Everything from this origin only: no inline script or style, no CDN, no framing. */
export const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; " +
  "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
  "form-action 'none'; frame-ancestors 'none'";

const ASSETS: Readonly<Record<string, { readonly type: string; readonly body: string }>> = {
  "/": { type: "text/html; charset=UTF-8", body: CONSOLE_ASSETS.html },
  "/console.js": { type: "text/javascript; charset=UTF-8", body: CONSOLE_ASSETS.js },
  "/console.css": { type: "text/css; charset=UTF-8", body: CONSOLE_ASSETS.css },
};

export function consoleRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  for (const [path, asset] of Object.entries(ASSETS)) {
    app.get(path, (c) =>
      c.body(asset.body, 200, {
        "Content-Type": asset.type,
        "Content-Security-Policy": CONSOLE_CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
      }));
  }
  return app;
}
