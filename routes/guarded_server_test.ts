import assert from "node:assert/strict";
import { memoryLogger } from "../home/log.ts";
import { serveGuarded } from "./guarded_server.ts";
import { sleep } from "../engine/mod.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function guarded(limits: { max: number; headersMs: number; idleMs: number }) {
  const server = await serveGuarded(() => new Response("ok"), {
    hostname: "127.0.0.1",
    port: 0,
    maxConnections: limits.max,
    headersTimeoutMs: limits.headersMs,
    bodyTimeoutMs: 60_000,
    idleTimeoutMs: limits.idleMs,
    log: memoryLogger(),
  });
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  return { server, connect, [Symbol.asyncDispose]: () => server.shutdown() };
}

/**
 * Everything the server sends until it closes the connection, and who closed it: the server, or
 * this reader after `ms` (far longer than the timeouts under test and far shorter than the 60 s
 * ones they are told apart from, so a loaded machine does not decide the answer).
 */
async function readUntilClosed(
  conn: Deno.Conn,
  ms = 20_000,
): Promise<{ text: string; closedBy: "server" | "reader" }> {
  let text = "";
  let closedBy: "server" | "reader" = "server";
  const buffer = new Uint8Array(4096);
  const timer = setTimeout(() => {
    closedBy = "reader";
    conn.close();
  }, ms);
  try {
    for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
      text += decoder.decode(buffer.subarray(0, n));
    }
  } catch { /* reset, or closed by the timer */ }
  clearTimeout(timer);
  return { text, closedBy };
}

const REQUEST = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

Deno.test("serveGuarded() closes a connection whose headers stay unfinished past the timeout", async () => {
  await using g = await guarded({ max: 10, headersMs: 300, idleMs: 60_000 });
  const conn = await g.connect();
  await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n"));
  assert.deepEqual(await readUntilClosed(conn), { text: "", closedBy: "server" });
  assert.equal(g.server.connections(), 0);
});

Deno.test("serveGuarded() times out unfinished headers of a later request on a kept-alive connection", async () => {
  await using g = await guarded({ max: 10, headersMs: 300, idleMs: 60_000 });
  const conn = await g.connect();
  await conn.write(encoder.encode(REQUEST));
  const buffer = new Uint8Array(4096);
  const n = await conn.read(buffer);
  assert.match(decoder.decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.1 200 OK[\s\S]*ok$/);
  await conn.write(encoder.encode("GET / HTTP/1.1\r\n"));
  assert.deepEqual(await readUntilClosed(conn), { text: "", closedBy: "server" });
});

Deno.test("serveGuarded() does not count its own stall against a client: a head that arrived while the server's loop was blocked is read and answered", async () => {
  await using g = await guarded({ max: 10, headersMs: 300, idleMs: 60_000 });
  const conn = await g.connect();
  while (g.server.connections() === 0) await sleep(5); // accepted: its deadline runs
  await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  // The server's thread (this one) busy for four times the headers' deadline: the whole head
  // waits in the socket meanwhile, unread. The client owes nothing.
  const until = performance.now() + 1200;
  while (performance.now() < until) { /* blocked */ }
  const { text, closedBy } = await readUntilClosed(conn);
  assert.match(text, /^HTTP\/1\.1 200 OK[\s\S]*ok$/);
  assert.equal(closedBy, "server");
});

Deno.test("serveGuarded() closes a kept-alive connection idle past the idle timeout", async () => {
  await using g = await guarded({ max: 10, headersMs: 60_000, idleMs: 300 });
  const conn = await g.connect();
  await conn.write(encoder.encode(REQUEST));
  const { text, closedBy } = await readUntilClosed(conn);
  assert.match(text, /^HTTP\/1\.1 200 OK[\s\S]*ok$/);
  assert.equal(closedBy, "server");
});

Deno.test("serveGuarded() makes room by closing the oldest idle connection, else answers 503", async () => {
  await using g = await guarded({ max: 2, headersMs: 60_000, idleMs: 60_000 });
  const waiting = [await g.connect(), await g.connect()];
  for (const c of waiting) await c.write(encoder.encode("GET / HTTP/1.1\r\n"));
  await sleep(50);
  const third = await g.connect();
  await third.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  assert.match((await readUntilClosed(third)).text, /^HTTP\/1\.1 200 OK/);
  assert.deepEqual(
    await readUntilClosed(waiting[0]!),
    { text: "", closedBy: "server" },
    "the oldest is closed",
  );
  waiting[1]!.close();

  // Two requests in flight (a handler that does not answer yet): nothing to close, so 503.
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  const busy = await serveGuarded(async () => {
    await held;
    return new Response("late");
  }, {
    hostname: "127.0.0.1",
    port: 0,
    maxConnections: 2,
    headersTimeoutMs: 60_000,
    bodyTimeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    log: memoryLogger(),
  });
  try {
    const url = `http://127.0.0.1:${busy.addr.port}/`;
    const inFlight = [fetch(url), fetch(url)];
    await sleep(100);
    const refused = await fetch(url);
    assert.equal(refused.status, 503);
    assert.match((await refused.json()).message, /server\.maxConnections/);
    release();
    for (const res of await Promise.all(inFlight)) assert.equal(await res.text(), "late");
  } finally {
    release();
    await busy.shutdown();
  }
});

Deno.test("serveGuarded() shutdown lets a response being sent finish, then stops", async () => {
  const server = await serveGuarded(() => {
    let n = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          await sleep(100);
          if (n++ === 5) controller.close();
          else controller.enqueue(encoder.encode(`chunk${n};`));
        },
      }),
    );
  }, {
    hostname: "127.0.0.1",
    port: 0,
    maxConnections: 10,
    headersTimeoutMs: 60_000,
    bodyTimeoutMs: 60_000,
    idleTimeoutMs: 60_000,
    log: memoryLogger(),
  });
  const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = (await reader.read()).value ?? "";
  const stopping = server.shutdown();
  for (let next = await reader.read(); !next.done; next = await reader.read()) text += next.value;
  assert.equal(text, "chunk1;chunk2;chunk3;chunk4;chunk5;");
  await stopping;
  await server.finished;
  await assert.rejects(fetch(`http://127.0.0.1:${server.addr.port}/`));
});
