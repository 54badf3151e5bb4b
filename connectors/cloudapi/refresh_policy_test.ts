import assert from "node:assert/strict";
import { HOUR_MS, needsFetch } from "./refresh_policy.ts";
import { pathMatcher } from "./uri_pattern.ts";

const log = { lagMs: 2 * HOUR_MS, updateMs: 15 * 60_000 };
const hour = Date.UTC(2026, 0, 1, 10);
const end = hour + HOUR_MS;

Deno.test("needsFetch() fetches an hour never fetched", () => {
  assert.equal(needsFetch(log, hour, undefined, end), true);
});

Deno.test("needsFetch() refetches within the lag only after the update frequency", () => {
  const state = { fetchedAt: end + 10 * 60_000, records: 3 };
  assert.equal(needsFetch(log, hour, state, end + 20 * 60_000), false);
  assert.equal(needsFetch(log, hour, state, end + 26 * 60_000), true);
});

Deno.test("needsFetch() treats an hour fetched after its lag as final", () => {
  const state = { fetchedAt: end + 2 * HOUR_MS, records: 3 };
  assert.equal(needsFetch(log, hour, state, end + 30 * 24 * HOUR_MS), false);
});

Deno.test("pathMatcher() reads time fields, globs and folder patterns", () => {
  const m = pathMatcher("directory_service/audits/$yyyy$/$MM$/$dd$/*");
  assert.equal(m("directory_service/audits/2026/03/10/20260310.audits.audits.json"), true);
  assert.equal(m("directory_service/audits/2026/03/10/11/2026031011.audits.json"), false);
  assert.equal(m("directory_service/logins/2026/03/10/20260310.logins.json"), false);
  assert.equal(pathMatcher("directory_service/")("directory_service/a/2026/x.json"), true);
  assert.equal(pathMatcher("*/audits/**")("cloud_activity/audits/2026/03/10/x.json"), true);
});
