/**
 * What the front (routes/guarded_server.ts) makes of a request's bytes, over real sockets to a
 * real server: framings llhttp refuses are answered 400 and closed, pipelined requests answered
 * in order, header bytes counted per request, and the client's address (never one a client
 * claims) handed to the back end and logged.
 */

import assert from "node:assert/strict";
import { startTestServer } from "../api/server.ts";
import { latin1, RawClient } from "./raw_http.ts";

const SMUGGLING: Record<string, string> = {
  "Content-Length with Transfer-Encoding (CL.TE)":
    "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
  "Transfer-Encoding not ending in chunked (TE.CL)":
    "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\nContent-Length: 3\r\n\r\n",
  "two Content-Lengths":
    "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 40\r\n\r\nabc",
  "an obs-fold header line": "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n",
  "bare LF line ends": "GET /healthz HTTP/1.1\nHost: x\n\n",
  "a space before the colon": "GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n",
  "binary bytes": "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
  "a response instead of a request": "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
};

Deno.test("framings a smuggler relies on are answered 400 in the JSON form and the connection closed", async () => {
  await using s = await startTestServer();
  for (const [name, bytes] of Object.entries(SMUGGLING)) {
    using client = await RawClient.open(s.url);
    await client.send(bytes);
    const end = await client.untilClosed(5000);
    assert.notEqual(end, "OPEN", `${name}: closed`);
    const text = latin1(end as Uint8Array);
    assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/, `${name}: ${text}`);
    assert.match(text, /\r\nConnection: close\r\n/, name);
    assert.equal(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)).code, "BAD_REQUEST", name);
    // Exactly one answer: nothing after the first message reached the back end.
    assert.equal(text.split("HTTP/1.1 ").length, 2, `${name}: ${text}`);
  }
});

Deno.test("pipelined requests are answered one after the other, in order", async () => {
  await using s = await startTestServer();
  using client = await RawClient.open(s.url);
  const auth = `Authorization: Bearer ${s.tokens.alice}\r\n`;
  const body = JSON.stringify({ pattern: "INT:n", lines: ["7"] });
  await client.send(
    `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n` +
      `POST /API/v1.0/patterns/try HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}` +
      `GET /API/v1.0/whoami HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
  );
  const first = await client.answer();
  const second = await client.answer();
  const third = await client.answer();
  assert.equal(first?.status, 200);
  assert.equal(second?.status, 200);
  assert.deepEqual(JSON.parse(second!.body).lines.map((l: { row: unknown }) => l.row), [{ n: 7 }]);
  assert.equal(third?.status, 200);
  assert.equal(JSON.parse(third!.body).name, "alice");
});

Deno.test("header bytes are counted per request: three 40 KiB heads on one connection are each served", async () => {
  await using s = await startTestServer();
  using client = await RawClient.open(s.url);
  const big = `X-Filler: ${"a".repeat(40 * 1024)}\r\n`;
  for (let i = 0; i < 3; i++) {
    await client.send(`GET /healthz HTTP/1.1\r\nHost: x\r\n${big}\r\n`);
    const answer = await client.answer();
    assert.equal(answer?.status, 200, `request ${i + 1}: ${answer?.head}`);
  }
  // One head over 64 KiB is refused, in the JSON form.
  await client.send(`GET /healthz HTTP/1.1\r\nHost: x\r\n${big}${big}\r\n`);
  const refused = await client.answer();
  assert.equal(refused?.status, 431);
  assert.equal(JSON.parse(refused!.body).code, "HEADERS_TOO_LARGE");
});

Deno.test("the request log names the client's address, never the Trawl-Client-Address a client sends", async () => {
  const lines: string[] = [];
  await using s = await startTestServer({}, { logLine: (line) => lines.push(line) });
  const res = await s.fetch("alice", "/API/v1.0/whoami", {
    headers: { "Trawl-Client-Address": "203.0.113.66", "trawl-client-address": "198.51.100.9" },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  // A raw request with the header twice, in other cases, and a login that fails.
  using client = await RawClient.open(s.url);
  await client.send(
    "GET /API/v1.0/whoami HTTP/1.1\r\nHost: x\r\nTRAWL-CLIENT-ADDRESS: 203.0.113.77\r\n" +
      "Authorization: Bearer trawl_not-a-token\r\ntrawl-client-address:203.0.113.78\r\n\r\n",
  );
  assert.equal((await client.answer())?.status, 401);
  const logged = lines.filter((l) => /GET \/API\/v1\.0\/whoami (200|401)/.test(l));
  assert.equal(logged.length, 2, lines.join("\n"));
  assert.match(logged[0]!, /whoami 200 \d+ms alice 127\.0\.0\.1$/);
  assert.match(logged[1]!, /whoami 401 \d+ms - 127\.0\.0\.1$/);
  assert.ok(!lines.some((l) => /203\.0\.113|198\.51\.100/.test(l)), lines.join("\n"));
});

Deno.test("an answer to HEAD has no body: the next request on the connection is answered", async () => {
  await using s = await startTestServer();
  using client = await RawClient.open(s.url);
  await client.send("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  assert.equal((await client.answer(10_000, { noBody: true }))?.status, 200);
  // Were the HEAD's answer read as having a body, the front would wait for it for ever.
  await client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  const next = await client.answer(5000);
  assert.equal(next?.status, 200);
});

Deno.test("Expect: 100-continue: the interim answer is passed on and the body then read", async () => {
  await using s = await startTestServer();
  using client = await RawClient.open(s.url);
  const body = JSON.stringify({ pattern: "INT:n", lines: ["5"] });
  await client.send(
    `POST /API/v1.0/patterns/try HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.tokens.alice}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
      `Expect: 100-continue\r\n\r\n`,
  );
  assert.equal((await client.answer())?.status, 100);
  await client.send(body);
  const answer = await client.answer();
  assert.equal(answer?.status, 200);
  assert.deepEqual(JSON.parse(answer!.body).lines.map((l: { row: unknown }) => l.row), [{ n: 5 }]);
});
