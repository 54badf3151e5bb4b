/** The `Retry-After` header of every connector's HTTP answers (cloudapi://, azblob://). */

/**
 * The wait a `Retry-After` header asks for, in ms: delay seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`). A date counts from the answer's own `Date` header, so a
 * server whose clock differs from ours still gets the wait it asked for; without one, from
 * `now`. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const v = headers.get("retry-after")?.trim();
  if (v === undefined || v === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  const date = Date.parse(headers.get("date") ?? "");
  return Math.max(0, at - (Number.isNaN(date) ? now : date));
}
