/** JSON answers with the content type API.md fixes (`application/json; charset=UTF-8`). */

import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export const JSON_CONTENT_TYPE = "application/json; charset=UTF-8";

/** Sends `body` as JSON with the API's content type. */
export function sendJson(
  c: Context,
  body: unknown,
  status: ContentfulStatusCode = 200,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return c.body(JSON.stringify(body), status, { ...headers, "Content-Type": JSON_CONTENT_TYPE });
}
