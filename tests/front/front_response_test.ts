/**
 * While the server owes bytes the front sets no deadline: an answer that takes longer than every
 * timeout before its first byte, or between two of its chunks (an events stream), is passed on
 * whole. Deadlines of 200 ms against waits of 1 s: the front's sweep runs every 50 ms here.
 */

import assert from "node:assert/strict";
import { memoryLogger } from "../../home/log.ts";
import { serveGuarded } from "../../routes/guarded_server.ts";
import { RawClient } from "./raw_http.ts";

const DEADLINE_MS = 200;
const encoder = new TextEncoder();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function server(handler: (request: Request) => Response | Promise<Response>) {
  const s = await serveGuarded(handler, {
    hostname: "127.0.0.1",
    port: 0,
    maxConnections: 10,
    headersTimeoutMs: DEADLINE_MS,
    bodyTimeoutMs: DEADLINE_MS,
    idleTimeoutMs: DEADLINE_MS,
    log: memoryLogger(),
  });
  return { url: `http://127.0.0.1:${s.addr.port}`, [Symbol.asyncDispose]: () => s.shutdown() };
}

Deno.test("an answer whose first byte comes after every deadline has passed is passed on", async () => {
  await using s = await server(async () => {
    await sleep(5 * DEADLINE_MS);
    return new Response("late but whole");
  });
  using client = await RawClient.open(s.url);
  await client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const answer = await client.answer();
  assert.equal(answer?.status, 200);
  assert.equal(answer?.body, "late but whole");
});

Deno.test("a streamed answer silent longer than every deadline between chunks is passed on whole", async () => {
  await using s = await server(() => {
    let n = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          await sleep(n === 0 ? 0 : 3 * DEADLINE_MS);
          if (n++ === 3) controller.close();
          else controller.enqueue(encoder.encode(`data: ${n}\n\n`));
        },
      }),
      { headers: { "Content-Type": "text/event-stream" } },
    );
  });
  const res = await fetch(s.url);
  assert.equal(await res.text(), "data: 1\n\ndata: 2\n\ndata: 3\n\n");
});

Deno.test("an answer to HEAD announcing a length has no body: the next request is answered", async () => {
  await using s = await server(() => new Response("hello"));
  using client = await RawClient.open(s.url);
  await client.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
  const head = await client.answer(5000, { noBody: true });
  assert.equal(head?.status, 200);
  assert.match(head!.head, /\r\ncontent-length: 5/i);
  // Were the HEAD's answer read as having those 5 bytes of body, the GET would wait for ever.
  await client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const next = await client.answer(5000);
  assert.equal(next?.body, "hello");
});
