/**
 * The promise, end to end: "A query through the HTTP API over each of the three
 * families returns exactly the emulator's records for the window: none lost, none twice, under
 * each injected fault." Every fault × log × API (synchronous `POST /API/v1.0/`, asynchronous
 * `POST /queries` + poll + result) runs against an emulator of its own; the cases of one fault
 * run side by side.
 */

import assert from "node:assert/strict";
import type { Fault } from "../emulator/emulator.ts";
import {
  type CloudServer,
  cloudServer,
  type CloudStore,
  duplicatesOf,
  FAMILIES,
  type FamilyLog,
  type QueryOutcome,
  readScript,
  storeDefinition,
} from "./http_harness.ts";
import { HOUR, NOW, TENANT } from "./harness.ts";

/** 09:00 to 11:00 on the emulator's clock (NOW is 12:30): two whole hours, final or not. */
const FROM = NOW - 3 * HOUR - 30 * 60_000;
const TO = FROM + 2 * HOUR;

type Mode = "sync" | "async";
const MODES: readonly Mode[] = ["sync", "async"];

interface FaultCase {
  /** Reads as the end of "no record is lost or doubled ...". */
  readonly title: string;
  readonly apis: readonly FamilyLog["api"][];
  readonly fault: Omit<Fault, "match">;
  readonly definition?: Record<string, unknown>;
  /** Proof beyond the emulator's fault counter that the connector met the fault. */
  readonly met: (store: CloudStore) => boolean;
}

const requestsWith = (store: CloudStore, status: number) =>
  store.emulator.requests.some((r) => r.status === status);

const FAULTS: readonly FaultCase[] = [
  {
    title: "under 429 with Retry-After",
    apis: ["graph", "manage"],
    fault: { kind: "429", times: 1, retryAfter: "1" },
    met: (s) => requestsWith(s, 429) && s.stats.throttled === 1,
  },
  {
    title: "under 429 without Retry-After",
    apis: ["graph", "manage"],
    fault: { kind: "429-no-retry-after", times: 2 },
    met: (s) => requestsWith(s, 429) && s.stats.throttled === 2,
  },
  {
    title: "under AF429 sent as 403",
    apis: ["manage"],
    fault: { kind: "af429-403", times: 2 },
    met: (s) => requestsWith(s, 403) && s.stats.throttled === 2,
  },
  {
    title: "under 5xx answers",
    apis: ["graph", "manage"],
    fault: { kind: "500", times: 2 },
    met: (s) => requestsWith(s, 503) && s.stats.retries >= 2,
  },
  {
    title: "under dropped connections",
    apis: ["graph", "manage"],
    fault: { kind: "drop", times: 2 },
    met: (s) => s.stats.retries >= 2,
  },
  {
    title: "under answers slower than readTimeout",
    apis: ["graph", "manage"],
    fault: { kind: "slow", times: 1, delayMs: 5_000 },
    // Headers must come within connect + read: 1.5 s, far below the 5 s the answer takes.
    definition: { connectTimeout: 500, readTimeout: 1_000 },
    met: (s) => s.emulator.requests.some((r) => r.aborted) && s.stats.retries >= 1,
  },
  {
    title: "under malformed JSON",
    apis: ["graph", "manage"],
    fault: { kind: "malformed", times: 2 },
    met: (s) => s.stats.retries >= 2,
  },
  {
    title: "under an expired skip token",
    apis: ["graph"],
    fault: { kind: "expired-skiptoken", times: 1 },
    // The window was restarted: a first page was asked for again after the refusal.
    met: (s) => {
      const i = s.emulator.requests.findIndex((r) => r.status === 400);
      return i >= 0 &&
        s.emulator.requests.slice(i + 1).some((r) =>
          r.api === "graph" && !r.url.includes("skiptoken")
        );
    },
  },
];

function runQuery(c: CloudServer, mode: Mode, script: string, log: FamilyLog) {
  return mode === "sync" ? c.syncQuery(script, log.idField) : c.asyncQuery(script, log.idField);
}

function assertExactly(out: QueryOutcome, expected: string[], what: string): void {
  assert.equal(out.status, 200, `${what}: ${out.bodies.join("\n")}`);
  assert.deepEqual(duplicatesOf(out.ids), [], `${what}: records twice`);
  assert.deepEqual([...out.ids].sort(), expected, `${what}: records lost or extra`);
}

/** Runs every case at once; fails with the failures of all of them. */
async function allCases(cases: (() => Promise<void>)[]): Promise<void> {
  const results = await Promise.allSettled(cases.map((c) => c()));
  const failures = results.flatMap((r) => r.status === "rejected" ? [r.reason] : []);
  if (failures.length > 0) {
    throw new AggregateError(failures, failures.map((f) => String(f?.message ?? f)).join("\n"));
  }
}

for (const fc of FAULTS) {
  const logs = FAMILIES.filter((f) => fc.apis.includes(f.api));
  Deno.test(`no record is lost or doubled through the HTTP API ${fc.title}, for ${logs.length} logs`, async () => {
    await using c = await cloudServer();
    await allCases(logs.flatMap((log) =>
      MODES.map((mode) => async () => {
        const what = `${log.name} (${mode}) ${fc.title}`;
        const store = await c.addStore({}, storeDefinition(fc.definition));
        const fault: Fault = {
          ...fc.fault,
          match: log.api === "graph" ? "/auditLogs/" : "/blobs/",
        };
        store.emulator.inject(fault);
        const out = await runQuery(c, mode, readScript(store.name, log, FROM, TO), log);
        const expected = log.expected(store.emulator, FROM, TO, store.clock.now);
        assert.ok(expected.length > 0, `${what}: the emulator has records in the window`);
        assertExactly(out, expected, what);
        const fired = store.emulator.fired.filter((f) => f.kind === fc.fault.kind).length;
        assert.equal(fired, fc.fault.times ?? 1, `${what}: the fault fired`);
        assert.ok(fc.met(store), `${what}: the connector met the fault`);
        if (out.last) assert.deepEqual(out.last.warnings, [], `${what}: no hour was given up`);
      })
    ));
  });
}

Deno.test("a suite subscription disabled by an admin is reported plainly through the HTTP API", async () => {
  await using c = await cloudServer();
  const log = FAMILIES.find((f) => f.api === "manage")!;
  await allCases(MODES.map((mode) => async () => {
    const store = await c.addStore();
    store.emulator.disableSubscription(TENANT, "Audit.Exchange");
    const out = await runQuery(c, mode, readScript(store.name, log, FROM, TO), log);
    // The records are out of reach: none come back, and none are made up.
    assertExactly(out, [], `${mode}`);
    // The list shows it disabled: no start is sent (one would be refused), no content listed.
    const start = store.emulator.requests.filter((r) => r.path.endsWith("/subscriptions/start"));
    assert.ok(start.every((r) => r.status === 400), "no start was accepted");
    assert.ok(!store.emulator.requests.some((r) => r.path.endsWith("/subscriptions/content")));
    assert.ok(!store.emulator.requests.some((r) => r.path.startsWith("/blobs/")));
    if (out.last) {
      assert.equal(out.last.state, "SUCCEEDED");
      const messages = out.last.warnings.map((w) => `${w.level} ${w.message}`);
      assert.equal(messages.length, 1, messages.join("\n"));
      assert.match(
        messages[0]!,
        /^ERROR datastore 'store\d+', log 'exchange', \d+ hours from \S+ to \S+ given up \(not fetched; the results lack them\): datastore 'store\d+': the subscription to Audit\.Exchange \(log 'exchange'\) was disabled by an administrator of the tenant; re-enable it there$/,
      );
    }
  }));
});

Deno.test("late records within the lag are picked up by a refetch through the HTTP API, once each", async () => {
  await using c = await cloudServer();
  // 11:00 to 12:00, the last whole hour; the lag (2 h) runs until 14:00.
  const from = NOW - 90 * 60_000;
  const to = from + HOUR;
  await allCases(FAMILIES.flatMap((log) =>
    MODES.map((mode) => async () => {
      const what = `${log.name} (${mode})`;
      const store = await c.addStore({
        seed: {
          from: NOW - 4 * HOUR,
          to: NOW,
          perHour: 8,
          lateFraction: 0.4,
          lateMaxMs: 90 * 60_000,
        },
      });
      const script = readScript(store.name, log, from, to);
      const first = await runQuery(c, mode, script, log);
      const early = log.expected(store.emulator, from, to, store.clock.now);
      assertExactly(first, early, `${what}, first`);
      // An hour later: past the update frequency (15 min), within the lag.
      store.clock.now = NOW + HOUR;
      const second = await runQuery(c, mode, script, log);
      const late = log.expected(store.emulator, from, to, store.clock.now);
      assert.ok(late.length > early.length, `${what}: the seed has late records`);
      assertExactly(second, late, `${what}, refetch`);
    })
  ));
});
