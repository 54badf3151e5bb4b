import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { baseStore, harness, HOUR, NOW } from "./harness.ts";

const HOUR_START = NOW - 90 * 60_000; // 2026-03-10 11:00 UTC

const cases = [
  [{}, "directory_service/audits/2026/03/10/20260310.audits.audits.json"],
  [
    { fileNameIncludesHour: true },
    "directory_service/audits/2026/03/10/2026031011.audits.audits.json",
  ],
  [
    { filePathIncludesHour: true },
    "directory_service/audits/2026/03/10/11/20260310.audits.audits.json",
  ],
  [
    { filePathIncludesHour: true, fileNameIncludesHour: true },
    "directory_service/audits/2026/03/10/11/2026031011.audits.audits.json",
  ],
  [
    { fileNameIncludesApp: false, filePathIncludesApp: true, fileNameIncludesHour: true },
    "directory_service/audits/2026/03/10/audits/2026031011.audits.json",
  ],
  [
    { filePathIncludesApp: true, fileNameIncludesHour: true },
    "directory_service/audits/2026/03/10/audits/2026031011.audits.audits.json",
  ],
  [
    { filePathIncludesApp: true, filePathIncludesHour: true },
    "directory_service/audits/2026/03/10/11/audits/20260310.audits.audits.json",
  ],
  [
    { fileNameIncludesApp: false, fileNameIncludesHour: true },
    "directory_service/audits/2026/03/10/2026031011.audits.json",
  ],
  [
    { timeZone: "Asia/Tokyo", fileNameIncludesHour: true, filePathIncludesHour: true },
    "directory_service/audits/2026/03/10/20/2026031020.audits.audits.json",
  ],
] as const;

for (const [options, path] of cases) {
  Deno.test(`placement ${JSON.stringify(options)} stores the hour at ${path}`, async () => {
    const h = await harness();
    try {
      await h.writeDefinition("corp", baseStore(options));
      const { files } = await h.list("cloudapi://corp/directory_service/audits/**", {
        from: HOUR_START,
        to: HOUR_START + HOUR,
      });
      assert.deepEqual(files.map((f) => f.uri), [`cloudapi://corp/${path}`]);
      const real = join(h.home, "engine_data", "cloud_api", "corp", path);
      assert.ok(existsSync(real));
      const lines = (await Deno.readTextFile(real)).trim().split("\n");
      assert.ok(lines.length > 0 && lines.every((l) => typeof JSON.parse(l).id === "string"));
    } finally {
      await h.close();
    }
  });
}
