/**
 * The front's deadlines against a real server process over real sockets (issue 22, item 1):
 * each phase in which the client owes bytes has one, and HTTP/2 prior knowledge is refused the
 * HTTP/2 way at once, so connections that never become requests cannot hold the server.
 * Timeouts are short (`--set`); every margin is at least half a second.
 */

import assert from "node:assert/strict";
import { runCli, type ServerProcess, startServerProcess } from "../foundation/server_process.ts";
import { latin1, RawClient } from "./raw_http.ts";

const HEADERS_TIMEOUT_MS = 1000;
const BODY_TIMEOUT_MS = 2000;
const MAX_CONNECTIONS = 200;

async function withServer(
  run: (server: ServerProcess, token: string) => Promise<void>,
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "trawl-front-" });
  try {
    const token = (await runCli(["user", "add", "alice", "--home", home])).lastLine;
    await using server = await startServerProcess(home, [
      ...["--set", `server.headersTimeout=${HEADERS_TIMEOUT_MS} ms`],
      ...["--set", `server.bodyTimeout=${BODY_TIMEOUT_MS} ms`],
      ...["--set", "server.idleTimeout=5 s"],
      ...["--set", `server.maxConnections=${MAX_CONNECTIONS}`],
    ], { openFiles: 4096 });
    await run(server, token);
    assert.equal(await server.stop(), 0, server.stderr.join("\n"));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function healthz(url: string): Promise<number> {
  using fresh = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const res = await fetch(`${url}/healthz`, { client: fresh });
  await res.body?.cancel();
  return res.status;
}

Deno.test("more HTTP/2 prefaces (PRI * HTTP/2.0) than server.maxConnections get GOAWAY, and /healthz stays 200 past headersTimeout", async () => {
  await withServer(async (server) => {
    const clients: RawClient[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS + 50; i++) {
        const client = await RawClient.open(server.url);
        clients.push(client);
        await client.send("PRI * HTTP/2.0\r\n\r\n");
      }
      // Each is answered with the server's HTTP/2 preface (an empty SETTINGS frame) and a GOAWAY
      // saying HTTP_1_1_REQUIRED, then closed: never left waiting, never HTTP/1.1 text.
      const ends = await Promise.all(clients.map((c) => c.untilClosed(10_000)));
      assert.equal(ends.filter((e) => e === "OPEN").length, 0, "every preface connection closed");
      let refused = 0;
      for (const end of ends) {
        const bytes = end as Uint8Array;
        if (bytes.length === 0) continue; // closed to make room, or refused 503 when full
        if (latin1(bytes).startsWith("HTTP/1.1 503")) continue;
        assert.deepEqual([...bytes.subarray(0, 9)], [0, 0, 0, 4, 0, 0, 0, 0, 0], "SETTINGS");
        assert.deepEqual([...bytes.subarray(9, 13)], [0, 0, 8, 7], "GOAWAY");
        assert.equal(bytes.at(-1), 0x0d, "HTTP_1_1_REQUIRED");
        refused++;
      }
      // Refused at once as they came, not left to time out (a few may be closed to make room).
      assert.ok(refused >= MAX_CONNECTIONS / 2, `${refused} answered with GOAWAY`);
      await sleep(HEADERS_TIMEOUT_MS + 500);
      assert.equal(await healthz(server.url), 200);
    } finally {
      for (const c of clients) c[Symbol.dispose]();
    }
  });
});

Deno.test("an HTTP/2 client with prior knowledge gets GOAWAY, and 64 KiB of frames after it never an HTTP/1.1 answer", async () => {
  await withServer(async (server) => {
    using client = await RawClient.open(server.url);
    // The preface and an empty SETTINGS frame, as an h2c client with prior knowledge starts.
    const preface = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    await client.send(new Uint8Array([...preface, 0, 0, 0, 4, 0, 0, 0, 0, 0]));
    // Whatever the server says first (a moment to say it), then frames that hold no CRLFCRLF.
    await client.untilClosed(1500);
    await client.send(new Uint8Array(70 * 1024).fill(0x42)).catch(() => {});
    const end = await client.untilClosed(5000);
    assert.notEqual(end, "OPEN");
    const bytes = end as Uint8Array;
    assert.ok(!latin1(bytes).includes("HTTP/1.1"), latin1(bytes));
    assert.deepEqual([...bytes.subarray(9, 13)], [0, 0, 8, 7], "GOAWAY");
    assert.equal(await healthz(server.url), 200);
  });
});

Deno.test("a request with a valid token whose body never comes is answered 408 and closed at server.bodyTimeout", async () => {
  await withServer(async (server, token) => {
    using client = await RawClient.open(server.url);
    await client.send(
      `POST /API/v1.0/patterns/try HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"pattern":`,
    );
    const started = Date.now();
    const end = await client.untilClosed(BODY_TIMEOUT_MS + 5000);
    assert.notEqual(end, "OPEN", "cut at the body's deadline");
    const text = latin1(end as Uint8Array);
    assert.match(text, /^HTTP\/1\.1 408 /);
    assert.match(text, /"code":"REQUEST_TIMEOUT"/);
    assert.match(text, /server\.bodyTimeout/);
    assert.ok(Date.now() - started >= BODY_TIMEOUT_MS - 100, "not before the deadline");
  });
});

Deno.test("server.bodyTimeout is between reads: a body trickling in slower than the whole deadline is read", async () => {
  await withServer(async (server, token) => {
    using client = await RawClient.open(server.url);
    const body = JSON.stringify({ pattern: "INT:n", lines: ["1", "2"] });
    await client.send(
      `POST /API/v1.0/patterns/try HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    // Six pieces half a second apart: 3 s in all, over the 2 s deadline, each gap well under it.
    const size = Math.ceil(body.length / 6);
    for (let at = 0; at < body.length; at += size) {
      await sleep(500);
      await client.send(body.slice(at, at + size));
    }
    const answer = await client.answer();
    assert.equal(answer?.status, 200, answer?.body);
    assert.equal(JSON.parse(answer!.body).ok, true);
  });
});

Deno.test("a kept-alive connection idle past headersTimeout starts its next request with a fresh header clock", async () => {
  await withServer(async (server) => {
    using client = await RawClient.open(server.url);
    await client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.equal((await client.answer())?.status, 200);
    // Idle longer than the header deadline (but within the idle one)...
    await sleep(HEADERS_TIMEOUT_MS + 500);
    // ...then a request whose head takes a moment: its deadline counts from its first byte.
    await client.send("GET /healthz HTTP/1.1\r\n");
    await sleep(300);
    await client.send("Host: x\r\n\r\n");
    const second = await client.answer();
    assert.equal(second?.status, 200, "the second request is answered, not cut");
  });
});

Deno.test("a kept-alive connection's later request with unfinished headers is still cut at headersTimeout", async () => {
  await withServer(async (server) => {
    using client = await RawClient.open(server.url);
    await client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.equal((await client.answer())?.status, 200);
    await client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    const end = await client.untilClosed(HEADERS_TIMEOUT_MS + 5000);
    assert.notEqual(end, "OPEN");
  });
});
