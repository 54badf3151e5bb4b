/**
 * Cloud hours kept in a Deno KV (a real KV file): what one "server" (a connector with its own
 * pool, flights and tokens) fetched, another reads without asking the provider; a KV that fails
 * during a fetch fails the query with an error naming the store and the hour, and leaves nothing
 * of the hour stored.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { baseStore, graphIds, harness, HOUR, NOW } from "./harness.ts";
import {
  type CloudApiDeps,
  openCloudApiStore,
} from "../../connectors/cloudapi/cloudapi_datastore.ts";
import { ConnectorPool } from "../../actors/connector_pool.ts";
import { FetchFlights } from "../../connectors/cloudapi/fetch_flights.ts";
import { TokenProvider } from "../../connectors/cloudapi/token_provider.ts";
import { SubscriptionMemory } from "../../connectors/cloudapi/subscriptions.ts";
import { openKvStorage } from "../../home/storage/kv_storage.ts";
import type { FileEntry, Warning } from "../../engine/contracts/datastore.ts";
import type { Storage } from "../../engine/contracts/storage.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import type { User } from "../../engine/contracts/user.ts";
import { sleep } from "../../engine/util/sleep.ts";

const ADMIN: User = { name: "root", groups: [], admin: true };
const FROM = NOW - 6 * HOUR - 30 * 60_000; // 06:00, whole hours
const TO = FROM + 3 * HOUR;
const URI = "cloudapi://corp/directory_service/audits/**";

/** A second server's connector on the same home and KV: nothing of the first one's process. */
function otherServer(deps: CloudApiDeps, storage: Storage): CloudApiDeps {
  return {
    ...deps,
    hourStorage: storage,
    tokens: new TokenProvider(),
    pacer: new ConnectorPool(),
    flights: new FetchFlights(),
    subscriptions: new SubscriptionMemory(),
  };
}

async function listAll(deps: CloudApiDeps, signal = new AbortController().signal) {
  const store = await openCloudApiStore(URI, ADMIN, deps);
  const files: FileEntry[] = [];
  const warnings: Warning[] = [];
  for await (
    const f of store.list(URI, {
      user: ADMIN,
      workDir: "/",
      timeZone: "UTC",
      from: FROM,
      to: TO,
      signal,
      onWarning: (w) => warnings.push(w),
    })
  ) files.push(f);
  return { files, warnings };
}

async function ids(files: FileEntry[]): Promise<string[]> {
  const out: string[] = [];
  for (const f of files) {
    const text = await new Response(await f.open(new AbortController().signal)).text();
    for (const line of text.split("\n")) if (line.trim()) out.push(JSON.parse(line).id);
  }
  return out.sort();
}

Deno.test("hours one server fetched into the KV are read by another without asking the provider", async () => {
  const h = await harness();
  const kv = await openKvStorage(join(h.home, "state.kv"));
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const first = await listAll(otherServer(h.deps(), kv));
    assert.deepEqual(first.warnings, []);
    assert.equal(first.files.length, 3);
    assert.deepEqual(await ids(first.files), graphIds(h, "audits", FROM, TO));
    const asked = h.emulator.requests.length;
    // Nothing went to the home's folder: the hours are in the KV.
    await assert.rejects(() => Deno.stat(join(h.home, "engine_data", "cloud_api", "corp")));

    const second = await listAll(otherServer(h.deps(), kv));
    assert.equal(h.emulator.requests.length, asked, "the second server asked the provider nothing");
    assert.deepEqual(
      second.files.map((f) => [f.uri, f.size]),
      first.files.map((f) => [f.uri, f.size]),
    );
    assert.deepEqual(await ids(second.files), graphIds(h, "audits", FROM, TO));
    const keys = (await Array.fromAsync(kv.list(["cloud_api", "corp"]))).map((k) => k.join("/"));
    assert.equal(keys.filter((k) => k.startsWith("cloud_api/corp/data/")).length, 3);
    assert.equal(keys.filter((k) => k.startsWith("cloud_api/corp/state/")).length, 3);
    assert.equal(keys.filter((k) => k.includes("/lease/")).length, 0, "leases released");
  } finally {
    kv.close();
    await h.close();
  }
});

Deno.test("a KV that fails during a fetch fails the query naming the store and hour, and stores nothing of it", async () => {
  // The first window request is slow: the KV goes away while it is under way.
  const h = await harness({
    faults: [{ kind: "slow", delayMs: 600, match: "directoryAudits", times: 1 }],
  });
  const file = join(h.home, "state.kv");
  const kv = await openKvStorage(file);
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const listing = listAll(otherServer(h.deps(), kv));
    const deadline = Date.now() + 10_000;
    while (!h.emulator.requests.some((r) => r.api === "graph")) {
      assert.ok(Date.now() < deadline, "no window request");
      await sleep(20);
    }
    kv.close();
    const error = await listing.then(() => undefined, (e) => e);
    assert.ok(error instanceof QueryError, String(error));

    assert.equal(error.diagnostic.code, "RUNTIME_ERROR");
    assert.match(
      error.message,
      new RegExp(
        `datastore 'corp', log 'audits', hour ${
          new Date(FROM).toISOString().replace(/\./g, "\\.")
        }: the server's storage failed while reading 'cloud_api/corp/.*' \\(nothing of the hour was stored\\)`,
      ),
    );
    assert.ok(!error.message.includes(h.home), "no host path in the error");

    const reopened = await openKvStorage(file);
    try {
      const keys = await Array.fromAsync(reopened.list(["cloud_api", "corp"]));
      const stored = keys.filter((k) => k[2] === "data" || k[2] === "state");
      assert.deepEqual(stored, [], "no half-written hour");
    } finally {
      reopened.close();
    }
  } finally {
    try {
      kv.close();
    } catch { /* closed by the test */ }
    await h.close();
  }
});

Deno.test("two servers on one KV fetching one suite log at once: its content is listed and read once", async () => {
  const h = await harness({
    faults: [{ kind: "slow", delayMs: 400, match: "subscriptions/list" }],
  });
  const kv = await openKvStorage(join(h.home, "state.kv"));
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const uri = "cloudapi://corp/productivity_suite/exchange/**";
    const list = async (deps: CloudApiDeps) => {
      const store = await openCloudApiStore(uri, ADMIN, deps);
      const files: FileEntry[] = [];
      for await (
        const f of store.list(uri, {
          user: ADMIN,
          workDir: "/",
          timeZone: "UTC",
          from: FROM,
          to: TO,
          signal: new AbortController().signal,
          onWarning: (w) => assert.fail(w.message),
        })
      ) files.push(f);
      return files;
    };
    const [a, b] = await Promise.all([
      list(otherServer(h.deps(), kv)),
      list(otherServer(h.deps(), kv)),
    ]);
    const manage = h.emulator.requests.filter((r) => r.api === "manage");
    assert.ok(manage.length > 0);
    assert.equal(new Set(manage.map((r) => r.url)).size, manage.length, "nothing asked twice");
    const read = async (files: FileEntry[]) => {
      const out: string[] = [];
      for (const f of files) {
        const text = await new Response(await f.open(new AbortController().signal)).text();
        for (const line of text.split("\n")) if (line.trim()) out.push(JSON.parse(line).Id);
      }
      return out.sort();
    };
    assert.deepEqual(await read(b), await read(a));
    assert.ok((await read(a)).length > 0);
  } finally {
    kv.close();
    await h.close();
  }
});

Deno.test("the provider failing the server that fetches an hour: the server waiting for it reports the failure without asking again", async () => {
  const h = await harness({
    faults: [
      { kind: "slow", delayMs: 300, match: "directoryAudits", times: 1 },
      { kind: "500", match: "directoryAudits", times: 100 },
    ],
  });
  const kv = await openKvStorage(join(h.home, "state.kv"));
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true, maxErrorRetries: 1 }));
    const [a, b] = await Promise.all([
      listAll(otherServer(h.deps(), kv)),
      listAll(otherServer(h.deps(), kv)),
    ]);
    // One server asked: every hour failed on a page, with one retry (hour 1's first page came):
    // 3 + 2 + 2 requests, not twice as many.
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    assert.equal(graph.length, 7, graph.map((r) => `${r.status} ${r.url}`).join("\n"));
    for (const run of [a, b]) {
      assert.equal(run.files.length, 0);
      assert.deepEqual(run.warnings.map((w) => w.level), ["WARN", "WARN", "WARN"]);
      for (const w of run.warnings) assert.match(w.message, /given up .*answered 503/);
    }
    const shared = [...a.warnings, ...b.warnings].filter((w) =>
      w.message.endsWith("(fetched by another server)")
    );
    assert.equal(shared.length, 3, "the waiting server reported the holder's failures");
  } finally {
    kv.close();
    await h.close();
  }
});

Deno.test("a day file larger than a KV value is kept in chunks and read whole by another server", async () => {
  const h = await harness({
    seed: { from: NOW - 48 * HOUR, to: NOW, perHour: 200 },
    graphPageSize: 1000,
  });
  const kv = await openKvStorage(join(h.home, "state.kv"));
  try {
    // One file per day: three hours merged into one value of a few hundred KB.
    await h.writeDefinition("corp", baseStore());
    const first = await listAll(otherServer(h.deps(), kv));
    assert.equal(first.files.length, 1);
    assert.ok(first.files[0]!.size > 3 * 60_000, `${first.files[0]!.size} bytes`);
    const second = await listAll(otherServer(h.deps(), kv));
    assert.deepEqual(await ids(second.files), graphIds(h, "audits", FROM, TO));
    assert.equal(graphIds(h, "audits", FROM, TO).length, 600);
  } finally {
    kv.close();
    await h.close();
  }
});
