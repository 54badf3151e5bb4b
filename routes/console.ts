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

/** A strong ETag of an asset: its SHA-256, computed once. */
const etags = new Map<string, Promise<string>>();
function etagOf(path: string, body: string): Promise<string> {
  let tag = etags.get(path);
  if (!tag) {
    tag = crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)).then((d) =>
      `"${
        [...new Uint8Array(d).subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("")
      }"`
    );
    etags.set(path, tag);
  }
  return tag;
}

/**
 * Each asset with an ETag: the browser revalidates at each load (`no-cache`) and an unchanged
 * asset answers 304 with no body, so the 470 KB script goes over the wire once per build.
 */
export function consoleRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  for (const [path, asset] of Object.entries(ASSETS)) {
    app.get(path, async (c) => {
      const etag = await etagOf(path, asset.body);
      const headers = {
        "Content-Type": asset.type,
        "Content-Security-Policy": CONSOLE_CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
        ETag: etag,
      };
      const asked = c.req.header("If-None-Match");
      if (asked?.split(",").some((t) => t.trim() === etag || t.trim() === `W/${etag}`)) {
        return c.body(null, 304, headers);
      }
      return c.body(asset.body, 200, headers);
    });
  }
  return app;
}
