/**
 * Several real `main.ts serve` processes on one Deno KV file, querying `cloudapi://` logs of the
 * cloud API emulator (run in the test's process, so its request log can be read): the fetched
 * hours are kept in the KV, a lease per store and hour lets one server fetch an hour while the
 * others wait for its result (and take over when its holder dies), and the tenants' token
 * buckets are shared, so the servers together keep to a tenant's rate.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "../foundation/server_process.ts";
import { CloudEmulator, type EmulatorOptions } from "../emulator/emulator.ts";
import { cleanUp, withDeadline } from "../support/deadline.ts";
import { sleep } from "../../engine/util/sleep.ts";

const TENANT = "contoso.onmicrosoft.com";
const CLIENT = "11111111-2222-3333-4444-555555555555";
const SECRET = "Sup3r.S3cret~Value";
const HOUR = 3_600_000;
/** Whole hours well in the past: every record of them is visible at the emulator. */
const FROM = Math.floor(Date.now() / HOUR) * HOUR - 30 * HOUR;

interface Setup {
  readonly emulator: CloudEmulator;
  readonly servers: ServerProcess[];
  readonly token: string;
  close(): Promise<void>;
}

/** The emulator, and `count` servers on one KV file, each with its own home; store `corp` defined. */
async function setUp(
  count: number,
  emulatorOptions: Partial<EmulatorOptions> = {},
  settings: readonly string[] = [],
): Promise<Setup> {
  const root = await Deno.makeTempDir({ prefix: "trawl-kv-cloud-" });
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
    seed: { from: FROM - 24 * HOUR, to: Date.now(), perHour: 5 },
    graphPageSize: 1000,
    ...emulatorOptions,
  });
  const servers: ServerProcess[] = [];
  const close = () =>
    cleanUp([
      ...servers.map((s) => () => s.stop("SIGKILL").then(() => {})),
      () => withDeadline(emulator.stop(), 10_000, "the emulator's shutdown"),
      () => Deno.remove(root, { recursive: true }),
    ]);
  try {
    await emulator.start();
    const kvFile = join(root, "state.kv");
    for (let i = 0; i < count; i++) {
      const home = join(root, `home${i}`);
      await Deno.mkdir(join(home, "conf"), { recursive: true });
      await Deno.writeTextFile(join(home, "conf", "license"), "edition = enterprise\n");
      await Deno.writeTextFile(
        join(home, "conf", "settings.conf"),
        [
          `storage = kv:${kvFile}`,
          `server.timeZone = UTC`,
          `cloudapi.loginHost = ${emulator.url}`,
          `cloudapi.graphHost = ${emulator.url}`,
          `cloudapi.manageHost = ${emulator.url}`,
          ...settings,
          "",
        ].join("\n"),
      );
      // One after the other: the first creates the admin in the KV.
      servers.push(await startServerProcess(home));
    }
    const token = servers[0]!.firstToken!;
    const put = await fetch(`${servers[0]!.url}/API/v1.0/datastores/corp`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        type: "CLOUDAPI",
        cloudapiStore: {
          clientId: CLIENT,
          tenantId: TENANT,
          secret: SECRET,
          timeZone: "UTC",
          fileNameIncludesHour: true,
          directoryLogs: "audits:audits|2 h|15 min, logins:signins|2 h|15 min",
          readTimeout: "120 s",
          acl: { users: {}, groups: {} },
        },
      }),
    });
    assert.equal(put.status, 201, await put.text());
    return { emulator, servers, token, close };
  } catch (e) {
    await close();
    throw e;
  }
}

function script(log: string, from: number, to: number): string {
  return `READ_JSON(src: 'cloudapi://corp/directory_service/${log}/**', ` +
    `from: TIMESTAMP('${new Date(from).toISOString()}'), to: TIMESTAMP('${
      new Date(to).toISOString()
    }'))`;
}

/** Runs a script through the synchronous API; the ids of its rows, sorted. */
async function query(server: ServerProcess, token: string, text: string): Promise<string[]> {
  const res = await fetch(`${server.url}/API/v1.0/?scriptPath=/user`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "text/vnd.engine.script" },
    body: text,
  });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  assert.equal(res.headers.get("Trawl-Warnings") ?? "0", "0", body);
  return (JSON.parse(body) as { id: string }[]).map((r) => r.id).sort();
}

/** The emulator's audit ids in [from, to). */
function auditIds(e: CloudEmulator, from: number, to: number): string[] {
  return e.data(TENANT).audits.filter((s) => s.time >= from && s.time < to)
    .map((s) => String(s.record.id)).sort();
}

/** The hour (its start, epoch ms) a Graph window request asks for. */
function hourOf(url: string): number {
  const filter = new URL(url, "http://x").searchParams.get("$filter") ?? "";
  const m = / ge (\S+) and/.exec(filter);
  return m ? Date.parse(m[1]!) : NaN;
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

Deno.test("two servers on one KV querying the same hours at once fetch each hour once, and a third server uses the stored hours", async () => {
  // Slow first answers keep the first fetches under way while the other server asks too.
  const setup = await setUp(3, {
    faults: [{ kind: "slow", delayMs: 700, match: "directoryAudits", times: 2 }],
  });
  try {
    const { emulator, servers: [a, b, c], token } = setup as {
      servers: [ServerProcess, ServerProcess, ServerProcess];
    } & typeof setup;
    const to = FROM + 4 * HOUR;
    const [fromA, fromB] = await Promise.all([
      query(a, token, script("audits", FROM, to)),
      query(b, token, script("audits", FROM, to)),
    ]);
    const expected = auditIds(emulator, FROM, to);
    assert.ok(expected.length > 10);
    assert.deepEqual(fromA, expected);
    assert.deepEqual(fromB, expected);
    const windows = () => emulator.requests.filter((r) => r.api === "graph").map((r) => r.url);
    const hours = windows().map(hourOf).sort();
    assert.deepEqual(hours, [0, 1, 2, 3].map((i) => FROM + i * HOUR), "each hour fetched once");

    // A third server reads the hours from the KV: no request reaches the provider.
    assert.deepEqual(
      await query(c, token, script("audits", FROM + HOUR, to)),
      auditIds(emulator, FROM + HOUR, to),
    );
    assert.equal(windows().length, 4);
  } finally {
    await setup.close();
  }
});

Deno.test("the server holding an hour's lease is killed mid-fetch: another waits for it, then takes the fetch over", async () => {
  // The first window request hangs (until its client goes away).
  const setup = await setUp(2, {
    faults: [{ kind: "slow", delayMs: 120_000, match: "directoryAudits", times: 1 }],
  }, ["cloudapi.fetchLease = 2 sec"]);
  try {
    const { emulator, servers: [a, b], token } = setup as {
      servers: [ServerProcess, ServerProcess];
    } & typeof setup;
    const to = FROM + 3 * HOUR;
    const graph = () => emulator.requests.filter((r) => r.api === "graph");
    const submitted = await fetch(`${a.url}/API/v1.0/queries?scriptPath=/user`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "text/vnd.engine.script" },
      body: script("audits", FROM, to),
    });
    assert.equal(submitted.status, 201, await submitted.text());
    await until("server A's first window request", () => graph().length === 1);
    assert.equal(hourOf(graph()[0]!.url), FROM);

    const fromB = query(b, token, script("audits", FROM, to));
    // A renews its lease (2 s) while it waits for the provider: B waits, asking nothing.
    await sleep(3_000);
    assert.equal(graph().length, 1, "B waits for A's fetch of the hour");
    const killedAt = Date.now();
    await a.stop("SIGKILL");

    assert.deepEqual(await fromB, auditIds(emulator, FROM, to));
    const requests = graph();
    assert.deepEqual(requests.map((r) => hourOf(r.url)), [
      FROM,
      FROM,
      FROM + HOUR,
      FROM + 2 * HOUR,
    ]);
    // B fetched the hour only after A died (and its lease ran out).
    assert.ok(requests[1]!.at >= killedAt, `${requests[1]!.at} < ${killedAt}`);
    assert.equal(requests[0]!.aborted, true, "A's request ended with A");
  } finally {
    await setup.close();
  }
});

Deno.test("two servers on one KV share a tenant's token bucket: together they stay within its rate", async () => {
  const limit = 4;
  const unitMs = 1_000;
  const setup = await setUp(2, { graphLimit: { limit, unitMs } }, [
    `cloudapi.graphRateLimit = ${limit}`,
    "cloudapi.graphRateTimeunit = 1 sec",
  ]);
  try {
    const { emulator, servers: [a, b], token } = setup as {
      servers: [ServerProcess, ServerProcess];
    } & typeof setup;
    const to = FROM + 10 * HOUR;
    // Different logs of one tenant: no lease in common, one Graph budget.
    const started = Date.now();
    const [audits, logins] = await Promise.all([
      query(a, token, script("audits", FROM, to)),
      query(b, token, script("logins", FROM, to)),
    ]);
    const seconds = (Date.now() - started) / 1000;
    assert.deepEqual(audits, auditIds(emulator, FROM, to));
    assert.ok(logins.length > 0);
    const graph = emulator.requests.filter((r) => r.api === "graph");
    assert.equal(graph.length, 20);
    assert.equal(emulator.throttledCount(), 0, "no throttling answer");
    // The emulator counts arrivals in a sliding window: no window saw more than the limit.
    const times = graph.map((r) => r.at).sort((x, y) => x - y);
    for (let i = limit; i < times.length; i++) {
      assert.ok(
        times[i]! - times[i - limit]! >= unitMs - 5,
        `${limit + 1} requests within ${times[i]! - times[i - limit]!} ms`,
      );
    }
    // …and no faster than the limit allows: 20 requests at 4 per second take four windows.
    // (How near the limit they come depends on the load: tokens come back a unit after their
    // request completed. Promptness is pinned in simulated time in actors/connector_machine_test.)
    assert.ok(seconds >= 4 * unitMs / 1000, `${seconds} s`);
  } finally {
    await setup.close();
  }
});
