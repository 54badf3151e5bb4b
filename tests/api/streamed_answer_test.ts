/**
 * Answers that stream (docs/api.md, "Streamed answers"): a synchronous answer, and a fetch of an
 * async result still being written, send rows while the query runs; a failure after the first
 * byte breaks the body; the bytes are those of the answer read once the query has SUCCEEDED.
 *
 * The source is a datastore kind of the test's own (`gate://`), over real HTTP on loopback: its
 * file gives a first part of its lines, then waits for the test to open the gate (the rest of
 * the lines follow) or to break it (the read fails). No timing: the test observes that bytes
 * arrived while the query's status says RUNNING.
 */

import assert from "node:assert/strict";
import type { DatastoreKind } from "../../connectors/datastore_kind.ts";
import { expectError, finished, SCRIPT_TYPE, status } from "./client.ts";
import { startTestServer, type TestServer } from "./server.ts";

/** Lines before the gate: over 1 MiB rendered, so that a segment is stored before the gate. */
const BEFORE = 40_000;
const AFTER = 10_000;

const line = (i: number) =>
  JSON.stringify({ n: i, s: `row ${i} ${"x".repeat(i % 40)}`, t: "2024-05-01T13:00:00Z" }) +
  "\n";
const encoder = new TextEncoder();
const FIRST = encoder.encode(Array.from({ length: BEFORE }, (_, i) => line(i)).join(""));
const REST = encoder.encode(Array.from({ length: AFTER }, (_, i) => line(BEFORE + i)).join(""));

/** What a read of `gate://<store>/lines.json` waits on after its first part. */
class Gate {
  #open = Promise.withResolvers<"open" | "break">();
  /** Whether the next reads pass without waiting (for reference answers). */
  wide = false;
  /** Reads of the file begun. */
  reads = 0;

  constructor() {
    this.#open.promise.catch(() => {});
  }

  open(): void {
    this.#open.resolve("open");
  }

  break(): void {
    this.#open.resolve("break");
  }

  /** A fresh gate for the next query. */
  reset(): void {
    this.#open = Promise.withResolvers();
  }

  stream(): ReadableStream<Uint8Array> {
    this.reads++;
    const wait = this.wide ? Promise.resolve("open" as const) : this.#open.promise;
    let step = 0;
    return new ReadableStream({
      async pull(controller) {
        if (step++ === 0) return controller.enqueue(FIRST.slice());
        if (await wait === "break") return controller.error(new Error("the gate broke"));
        controller.enqueue(REST.slice());
        controller.close();
      },
    }, { highWaterMark: 0 });
  }
}

function gateKind(gate: Gate): DatastoreKind {
  return {
    type: "GATE",
    scheme: "gate",
    storeKey: "gateStore",
    description: "a source whose reads wait for the test",
    secretKeys: [],
    boundKeys: [],
    check: () => ({ ok: true, families: [], logs: [] }),
    factory(uri) {
      const name = uri.slice("gate://".length).split("/")[0];
      return Promise.resolve({
        async *list() {
          yield {
            uri: `gate://${name}/lines.json`,
            size: FIRST.length + REST.length,
            modified: 0,
            pathTime: null,
            open: () => Promise.resolve(gate.stream()),
          };
        },
      });
    },
  };
}

const SCRIPT = "READ_JSON(src: 'gate://g/lines.json') | select(n, s, t)";

async function gatedServer(gate: Gate): Promise<TestServer & { root: string }> {
  const s = await startTestServer({}, { kinds: [gateKind(gate)] });
  const root = await s.deps.users.add("root", { admin: true });
  const put = await fetch(`${s.url}/API/v1.0/datastores/g`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${root}`, "Content-Type": "application/json" },
    body: JSON.stringify({ type: "GATE", gateStore: {} }),
  });
  assert.equal(put.status, 201, await put.text());
  return Object.assign(s, { root });
}

/** A request that never answers fails the test after this long (a hung answer, not a bound). */
const REQUEST_TIMEOUT_MS = 60_000;

function call(s: TestServer & { root: string }, path: string, init: RequestInit = {}) {
  return fetch(s.url + path, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    ...init,
    headers: { Authorization: `Bearer ${s.root}`, ...init.headers as Record<string, string> },
  });
}

async function stateOf(s: TestServer & { root: string }, id: string): Promise<string> {
  const res = await call(s, `/API/v1.0/queries/${id}`);
  assert.equal(res.status, 200);
  return (await res.json()).state;
}

/** The answer the async API gives once the query has SUCCEEDED: not streamed. */
async function referenceBytes(
  s: TestServer & { root: string },
  gate: Gate,
  accept: string,
): Promise<Uint8Array> {
  gate.wide = true;
  try {
    const posted = await call(s, "/API/v1.0/queries?scriptPath=/user", {
      method: "POST",
      headers: { ...SCRIPT_TYPE, Accept: accept },
      body: SCRIPT,
    });
    assert.equal(posted.status, 201);
    const { queryId } = await posted.json();
    const client = { url: s.url, fetch: (_u: string, p: string, i?: RequestInit) => call(s, p, i) };
    assert.equal((await finished(client, queryId)).state, "SUCCEEDED");
    const res = await call(s, `/API/v1.0/queries/${queryId}/result`);
    assert.equal(res.status, 200);
    return new Uint8Array(await res.arrayBuffer());
  } finally {
    gate.wide = false;
  }
}

/** Reads the rest of a body into one array (after the chunks already read). */
async function rest(reader: ReadableStreamDefaultReader<Uint8Array>, got: Uint8Array[]) {
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    got.push(r.value);
  }
  const out = new Uint8Array(got.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of got) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const FORMATS = [
  "application/json",
  "application/x-ndjson",
  "application/csv",
  "text/tab-separated-values",
];

Deno.test("a synchronous answer sends rows while the query runs, the same bytes as the answer read once it SUCCEEDED, in every text format", async () => {
  const gate = new Gate();
  await using s = await gatedServer(gate);
  // Compressed too (fetch decodes gzip): each chunk is flushed by the compressor.
  const cases = [...FORMATS.map((f) => [f, "identity"]), ["application/x-ndjson", "gzip"]];
  for (const [accept, encoding] of cases) {
    gate.reset();
    const res = await call(s, "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: { ...SCRIPT_TYPE, Accept: accept!, "Accept-Encoding": encoding! },
      body: SCRIPT,
    });
    assert.equal(res.headers.get("Content-Encoding"), encoding === "gzip" ? "gzip" : null);
    assert.equal(res.status, 200, accept);
    const id = res.headers.get("Trawl-Query-Id")!;
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done && first.value.length > 0, accept);
    // The first bytes are here while the query still waits for the rest of its source.
    assert.equal(await stateOf(s, id), "RUNNING", accept);
    gate.open();
    const streamed = await rest(reader, [first.value]);
    assert.equal(await stateOf(s, id), "SUCCEEDED");
    const reference = await referenceBytes(s, gate, accept!);
    assert.equal(streamed.length, reference.length, accept);
    assert.deepEqual(streamed, reference, accept);
  }
  // The answer is whole: every row, in order.
  gate.reset();
  gate.wide = true;
  const whole = await call(s, "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Accept: "application/json" },
    body: SCRIPT,
  });
  const rows = await whole.json();
  assert.equal(rows.length, BEFORE + AFTER);
  assert.deepEqual(rows.map((r: { n: number }) => r.n), rows.map((_: unknown, i: number) => i));
});

Deno.test("a synchronous answer's rows are let go of once sent: while it streams, its result holds only what is not read yet", async () => {
  const gate = new Gate();
  await using s = await gatedServer(gate);
  const res = await call(s, "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Accept: "application/x-ndjson" },
    body: SCRIPT,
  });
  assert.equal(res.status, 200);
  const id = res.headers.get("Trawl-Query-Id")!;
  const reader = res.body!.getReader();
  // The client reads a MiB of the rows the source gave before its gate.
  const got: Uint8Array[] = [];
  let sent = 0;
  while (sent < 1 << 20) {
    const r = await reader.read();
    assert.ok(!r.done);
    got.push(r.value);
    sent += r.value.length;
  }
  assert.equal(await stateOf(s, id), "RUNNING");
  // While the query waits at the gate, the bytes its result holds (the server's metric) fall
  // below a quarter of what was sent: what the answer took is not kept (docs/api.md).
  const held = async () => {
    const text = await (await call(s, "/metrics")).text();
    return Number(/^trawl_retained_result_bytes (\d+)$/m.exec(text)![1]);
  };
  let bytes = await held();
  for (const start = Date.now(); bytes >= sent / 4 && Date.now() - start < 20_000;) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    bytes = await held();
  }
  assert.ok(bytes < sent / 4, `the result holds ${bytes} bytes after ${sent} were sent`);
  gate.open();
  const streamed = await rest(reader, got);
  assert.equal(await stateOf(s, id), "SUCCEEDED");
  const reference = await referenceBytes(s, gate, "application/x-ndjson");
  assert.equal(streamed.length, reference.length);
  assert.deepEqual(streamed, reference);
});

Deno.test("a synchronous answer whose query fails after its first bytes breaks: the client's read fails, the query is FAILED", async () => {
  const gate = new Gate();
  await using s = await gatedServer(gate);
  for (const accept of FORMATS) {
    gate.reset();
    const res = await call(s, "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: { ...SCRIPT_TYPE, Accept: accept },
      body: SCRIPT,
    });
    assert.equal(res.status, 200);
    const id = res.headers.get("Trawl-Query-Id")!;
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done);
    assert.equal(await stateOf(s, id), "RUNNING");
    gate.break();
    await assert.rejects(rest(reader, [first.value]), accept);
    assert.equal(await stateOf(s, id), "FAILED");
  }
});

Deno.test("a fetch of a running async result without Range streams it; with a Range it answers the rows so far", async () => {
  const gate = new Gate();
  await using s = await gatedServer(gate);
  const client = { url: s.url, fetch: (_u: string, p: string, i?: RequestInit) => call(s, p, i) };
  for (const accept of ["application/x-ndjson", "application/csv"]) {
    gate.reset();
    const posted = await call(s, "/API/v1.0/queries?scriptPath=/user", {
      method: "POST",
      headers: { ...SCRIPT_TYPE, Accept: accept },
      body: SCRIPT,
    });
    const { queryId } = await posted.json();
    // A page while it runs: the rows so far (tests/api/running_result_test.ts), or 409 before.
    const paged = await call(s, `/API/v1.0/queries/${queryId}/result`, {
      headers: { Range: "items=0-9" },
    });
    if (paged.status === 409) await expectError(paged, 409, "QUERY_NOT_FINISHED");
    else {
      await paged.body?.cancel();
      assert.ok([200, 206].includes(paged.status));
      assert.equal(paged.headers.get("Trawl-Query-State"), "RUNNING");
    }
    const res = await call(s, `/API/v1.0/queries/${queryId}/result`);
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done && first.value.length > 0);
    assert.equal((await status(client, queryId, "root")).state, "RUNNING");
    gate.open();
    const streamed = await rest(reader, [first.value]);
    // Read again once it has SUCCEEDED: the same bytes.
    const again = await call(s, `/API/v1.0/queries/${queryId}/result`);
    assert.deepEqual(streamed, new Uint8Array(await again.arrayBuffer()));
  }
  // A query that fails while its result is fetched: the fetch breaks.
  gate.reset();
  const posted = await call(s, "/API/v1.0/queries?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Accept: "application/json" },
    body: SCRIPT,
  });
  const { queryId } = await posted.json();
  const res = await call(s, `/API/v1.0/queries/${queryId}/result`);
  const reader = res.body!.getReader();
  const first = await reader.read();
  assert.ok(!first.done);
  gate.break();
  await assert.rejects(rest(reader, [first.value]));
  assert.equal((await finished(client, queryId)).state, "FAILED");
});

Deno.test("a client that leaves while its synchronous answer streams cancels the query, which is then freed", async () => {
  const gate = new Gate();
  await using s = await gatedServer(gate);
  const res = await call(s, "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Accept: "application/x-ndjson", "Accept-Encoding": "identity" },
    body: SCRIPT,
  });
  const id = res.headers.get("Trawl-Query-Id")!;
  const reader = res.body!.getReader();
  assert.ok(!(await reader.read()).done);
  assert.equal(await stateOf(s, id), "RUNNING");
  await reader.cancel();
  // Cancelled (its source never opened again), then freed: its status goes too.
  for (;;) {
    const st = await call(s, `/API/v1.0/queries/${id}`);
    if (st.status !== 200) {
      await expectError(st, 410, "QUERY_EXPIRED");
      break;
    }
    const { state } = await st.json();
    assert.ok(state === "RUNNING" || state === "CANCELLED", state);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  gate.open();
});
