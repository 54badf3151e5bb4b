/**
 * The histogram's buckets with the empty ones put back: the server's `group(t)` gives a row only
 * for a bucket that holds events, and bars drawn from those alone stretch over the gaps (three
 * events in 2 hours of 5-minute buckets drew three bars 20 minutes wide). Missing buckets between
 * two given ones become zeros. A step of 1.5 buckets or more is a gap, so that days of 23 or 25
 * hours (a bucket of a day in a zone with daylight saving) are not taken for one; at most `limit`
 * zeros are added, the rest left as gaps.
 */
export interface Bucket {
  /** Its start, milliseconds since the epoch. */
  readonly t: number;
  readonly n: number;
}

export function withEmptyBuckets(
  points: readonly Bucket[],
  bucketMs: number,
  limit = 2_000,
): Bucket[] {
  const sorted = [...points].sort((a, b) => a.t - b.t);
  const out: Bucket[] = [];
  let added = 0;
  for (const point of sorted) {
    const last = out.at(-1);
    if (last) {
      for (let t = last.t + bucketMs; point.t - t >= bucketMs / 2 && added < limit; t += bucketMs) {
        out.push({ t, n: 0 });
        added++;
      }
    }
    out.push(point);
  }
  return out;
}
