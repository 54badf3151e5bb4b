/**
 * Faults between the `azblob://` datastore and the Blob service: a proxy in front of Azurite
 * answers chosen requests itself (throttling with Retry-After, a 500, an answer that never
 * comes) and passes the rest through, so the store's retries and timeouts meet a real service.
 */

import assert from "node:assert/strict";
import { openAzblobStore } from "../../connectors/azblob/azblob_datastore.ts";
import type { FileEntry, Warning } from "../../engine/contracts/datastore.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import { type Azurite, DEV_ACCOUNT, DEV_KEY, startAzurite } from "../support/azurite.ts";
import { alice, collect } from "../support/temp_tree.ts";
import { withDeadline } from "../support/deadline.ts";

/** What the proxy does with the next request it matches: answer it, or hold it for ever. */
type Fault = {
  readonly when: (url: URL, headers: Headers) => boolean;
  readonly then: "stall" | (() => Response);
};

interface Faulty extends AsyncDisposable {
  readonly az: Azurite;
  readonly faults: Fault[];
  /** Requests the proxy saw, as `<comp or range> <path>`. */
  readonly seen: string[];
  list(uri: string, store?: Record<string, unknown>): Promise<FileEntry[]>;
  readonly warnings: Warning[];
}

async function faulty(): Promise<Faulty> {
  const az = await startAzurite();
  const faults: Fault[] = [];
  const seen: string[] = [];
  const held = new Set<() => void>();
  const target = new URL(az.endpoint);
  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: resolve }, (req) => {
    const url = new URL(req.url);
    seen.push(`${url.searchParams.get("comp") ?? req.headers.get("Range")} ${url.pathname}`);
    const i = faults.findIndex((f) => f.when(url, req.headers));
    if (i >= 0) {
      const [fault] = faults.splice(i, 1);
      if (fault!.then !== "stall") return fault!.then();
      // Held until the client gives up (its abort closes the connection) or the test ends.
      return new Promise<Response>((done) => {
        const release = () => done(new Response("late", { status: 500 }));
        held.add(release);
        req.signal.addEventListener("abort", () => {
          held.delete(release);
          release();
        });
      });
    }
    const headers = new Headers(req.headers);
    headers.delete("host");
    return fetch(new URL(url.pathname + url.search, target), { headers });
  });
  const port = (await listening).port;
  const endpoint = `http://127.0.0.1:${port}/${DEV_ACCOUNT}`;
  const warnings: Warning[] = [];
  return {
    az,
    faults,
    seen,
    warnings,
    async list(uri, store = {}) {
      const definition = {
        type: "AZBLOB",
        azblobStore: {
          endpoint,
          accountName: DEV_ACCOUNT,
          accountKey: DEV_KEY,
          container: "logs",
          acl: { users: { alice: ["read", "list"] } },
          ...store,
        },
      };
      const deps = {
        definitionText: () => Promise.resolve(JSON.stringify(definition)),
        backoffMs: 10,
        rangeBytes: 32,
      };
      const ds = await openAzblobStore(uri, alice, deps);
      return await collect(ds.list(uri, {
        user: alice,
        workDir: "/",
        timeZone: "UTC",
        signal: new AbortController().signal,
        onWarning: (w) => warnings.push(w),
      }));
    },
    async [Symbol.asyncDispose]() {
      for (const release of held) release();
      await withDeadline(server.shutdown(), 10_000, "the proxy's shutdown");
      await az[Symbol.asyncDispose]();
    },
  };
}

const isList = (url: URL) => url.searchParams.get("comp") === "list";
const read = async (e: FileEntry) =>
  await new Response(await e.open(new AbortController().signal)).text();
const LINES = Array.from({ length: 6 }, (_, i) => `{"line":${i},"text":"abcdefghij"}`).join("\n") +
  "\n";

Deno.test("throttling is waited out for Retry-After, and a 500 in the middle of a read is retried", async () => {
  await using f = await faulty();
  await f.az.upload("logs", "a/1.json", LINES);
  f.faults.push({
    when: isList,
    then: () =>
      new Response("<Error><Code>ServerBusy</Code></Error>", {
        status: 503,
        headers: { "Retry-After": "1", "x-ms-error-code": "ServerBusy" },
      }),
  });
  const started = Date.now();
  const [entry] = await f.list("azblob://logs/a/*.json");
  assert.ok(Date.now() - started >= 950, "Retry-After was not waited for");
  assert.equal(f.seen.filter((s) => s.startsWith("list")).length, 2);
  f.faults.push({
    when: (_, h) => h.get("Range") === "bytes=64-95",
    then: () => new Response("oops", { status: 500 }),
  });
  assert.equal(await read(entry!), LINES);
  assert.equal(f.seen.filter((s) => s.startsWith("bytes=64-95")).length, 2);
  assert.equal(f.warnings.length, 0);
});

Deno.test("an answer that does not come within the timeouts is retried", async () => {
  await using f = await faulty();
  await f.az.upload("logs", "a/1.json", LINES);
  f.faults.push({ when: isList, then: "stall" });
  f.faults.push({ when: (_, h) => h.get("Range") === "bytes=0-31", then: "stall" });
  const started = Date.now();
  const [entry] = await f.list("azblob://logs/a/*.json", { connectTimeout: 250, readTimeout: 500 });
  assert.equal(await read(entry!), LINES);
  // Two waits of connect + read timeout, not for ever.
  assert.ok(Date.now() - started >= 1500, `${Date.now() - started} ms`);
  // Each stalled request was tried again. On a busy machine (load 11) a passed-through answer of
  // Azurite's once also took longer than the timeouts and was tried a third and fourth time:
  // more tries are the same behaviour, so only "at least once again" is asserted.
  assert.ok(f.seen.filter((s) => s.startsWith("list")).length >= 2, f.seen.join(", "));
  assert.ok(f.seen.filter((s) => s.startsWith("bytes=0-31")).length >= 2, f.seen.join(", "));
});

Deno.test("a service that keeps failing is given up after maxErrorRetries, naming the store", async () => {
  await using f = await faulty();
  await f.az.upload("logs", "a/1.json", LINES);
  for (let i = 0; i < 3; i++) {
    f.faults.push({ when: isList, then: () => new Response("", { status: 502 }) });
  }
  const err = await f.list("azblob://logs/a/*.json", { maxErrorRetries: 2 }).catch((e) => e);
  assert.ok(err instanceof QueryError, String(err));
  assert.equal(err.diagnostic.code, "RUNTIME_ERROR");
  assert.match(
    err.message,
    /^datastore 'logs': GET \/devstoreaccount1\/logs: given up after 2 retries; last: the service answered 502/,
  );
  assert.equal(f.seen.length, 3);
});
