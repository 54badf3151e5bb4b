/**
 * A store in a zone with daylight saving time: the day the clocks go forward has 23 hours, the
 * day they go back 25, and every record lands once, in the file of its local day.
 */

import assert from "node:assert/strict";
import { baseStore, graphIds, harness, HOUR } from "./harness.ts";

const ZONE = "Europe/Berlin";

/** The local date of `ms` in the zone, as `yyyy/MM/dd`. */
function localDay(ms: number): string {
  const f = new Intl.DateTimeFormat("en-CA", { timeZone: ZONE, dateStyle: "short" });
  return f.format(new Date(ms)).replaceAll("-", "/");
}

for (
  const [what, dayStart, hours] of [
    // 2026-03-29 00:00 CET to 2026-03-30 00:00 CEST.
    ["forward (a 23-hour day)", Date.UTC(2026, 2, 28, 23), 23],
    // 2026-10-25 00:00 CEST to 2026-10-26 00:00 CET.
    ["back (a 25-hour day)", Date.UTC(2026, 9, 24, 22), 25],
  ] as const
) {
  Deno.test(`clocks going ${what} give a day file of ${hours} hours, every record once`, async () => {
    const dayEnd = dayStart + hours * HOUR;
    const h = await harness({ seed: { from: dayStart - 6 * HOUR, to: dayEnd + 6 * HOUR } });
    try {
      h.clock.now = dayEnd + 6 * HOUR;
      await h.writeDefinition("corp", baseStore({ timeZone: ZONE }));
      const from = dayStart - 3 * HOUR;
      const to = dayEnd + 3 * HOUR;
      const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
        from,
        to,
      });
      assert.deepEqual(warnings, []);
      const ids: string[] = [];
      const day = localDay(dayStart);
      let dayHours = new Set<number>();
      for (const f of files) {
        for (const r of await h.read(f)) {
          ids.push(String(r.id));
          const t = Date.parse(String(r.activityDateTime));
          assert.ok(
            f.uri.includes(`/${localDay(t)}/`),
            `${r.id} at ${r.activityDateTime} in ${f.uri}`,
          );
          if (f.uri.includes(`/${day}/`)) dayHours = dayHours.add(Math.floor(t / HOUR));
        }
      }
      assert.equal(new Set(ids).size, ids.length, "no record twice");
      assert.deepEqual(ids.sort(), graphIds(h, "audits", from, to), "every record");
      assert.equal(dayHours.size, hours, `the day ${day} holds ${hours} hours`);
      const dayFile = files.find((f) => f.uri.includes(`/${day}/`))!;
      assert.equal(dayFile.pathTime, dayStart, "the day file starts at local midnight");
    } finally {
      await h.close();
    }
  });
}
