import assert from "node:assert/strict";
import { forwardedHead } from "./request_head.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

Deno.test("forwardedHead() adds the client's address before the blank line", () => {
  assert.deepEqual(
    text(forwardedHead(bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "203.0.113.7")),
    "GET / HTTP/1.1\r\nHost: x\r\nTrawl-Client-Address: 203.0.113.7\r\n\r\n",
  );
});

Deno.test("forwardedHead() drops every Trawl-Client-Address a client sent, in any case", () => {
  const head = "POST /trawl-client-address HTTP/1.1\r\ntrawl-client-address: 1.2.3.4\r\n" +
    "Host: x\r\nTRAWL-CLIENT-ADDRESS : 5.6.7.8\r\nTrawl-Client-Addressing: kept\r\n" +
    "Content-Length: 0\r\n\r\n";
  assert.deepEqual(
    text(forwardedHead(bytes(head), "::1")),
    "POST /trawl-client-address HTTP/1.1\r\nHost: x\r\nTrawl-Client-Addressing: kept\r\n" +
      "Content-Length: 0\r\nTrawl-Client-Address: ::1\r\n\r\n",
  );
});

Deno.test("forwardedHead() keeps header bytes that are not ASCII unchanged", () => {
  const head = new Uint8Array([
    ...bytes("GET / HTTP/1.1\r\nX: "),
    0xe9,
    0xff,
    ...bytes("\r\n\r\n"),
  ]);
  const out = forwardedHead(head, "10.0.0.1");
  assert.deepEqual([...out.subarray(0, head.length - 2)], [...head.subarray(0, head.length - 2)]);
});
