import assert from "node:assert/strict";
import { retryAfterMs } from "./retry_after.ts";

const NOW = Date.parse("2026-10-21T07:28:00Z");

Deno.test("retryAfterMs() reads delay seconds, fractions included", () => {
  assert.equal(retryAfterMs(new Headers({ "Retry-After": "120" }), NOW), 120_000);
  assert.equal(retryAfterMs(new Headers({ "Retry-After": " 1.5 " }), NOW), 1500);
});

Deno.test("retryAfterMs() counts an HTTP date from the answer's Date header, else from now", () => {
  const at = "Wed, 21 Oct 2026 07:28:30 GMT";
  // The server's clock is 10 minutes behind ours: the wait is still the 30 s it asked for.
  const date = "Wed, 21 Oct 2026 07:28:00 GMT";
  assert.equal(retryAfterMs(new Headers({ "Retry-After": at, Date: date }), NOW + 600_000), 30_000);
  assert.equal(retryAfterMs(new Headers({ "Retry-After": at }), NOW), 30_000);
  assert.equal(retryAfterMs(new Headers({ "Retry-After": at }), NOW + 60_000), 0);
});

Deno.test("retryAfterMs() is undefined when the header is absent, empty or unreadable", () => {
  assert.equal(retryAfterMs(new Headers(), NOW), undefined);
  assert.equal(retryAfterMs(new Headers({ "Retry-After": "" }), NOW), undefined);
  assert.equal(retryAfterMs(new Headers({ "Retry-After": "soon" }), NOW), undefined);
});
