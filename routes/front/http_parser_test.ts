import assert from "node:assert/strict";
import { HttpParser } from "./http_parser.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("HttpParser pauses a request at the end of its head, then at its end", () => {
  const parser = new HttpParser("request");
  const head = "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\n";
  const request = bytes(`${head}abcGET`);
  assert.deepEqual(parser.execute(request), { kind: "head", at: head.length });
  assert.equal(parser.headRequest, false);
  const body = request.subarray(head.length);
  assert.deepEqual(parser.execute(body), { kind: "complete", at: 3, status: 0 });
  parser.close();
});

Deno.test("HttpParser tells a HEAD request, and reads its answer without a body", () => {
  const requests = new HttpParser("request");
  assert.equal(requests.execute(bytes("HEAD / HTTP/1.1\r\nHost: h\r\n\r\n")).kind, "head");
  assert.equal(requests.headRequest, true);
  const responses = new HttpParser("response");
  responses.answersHead = requests.headRequest;
  const answer = bytes("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n");
  assert.deepEqual(responses.execute(answer), { kind: "complete", at: answer.length, status: 200 });
  requests.close();
  responses.close();
});

Deno.test("HttpParser names what llhttp refuses, in llhttp's words", () => {
  const parser = new HttpParser("request");
  const step = parser.execute(
    bytes("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
  );
  assert.deepEqual(step, { kind: "error", reason: "Duplicate Content-Length" });
  parser.close();
});

Deno.test("HttpParser takes an input larger than its buffer, beside other parsers", () => {
  // Its input buffer grows (and the module's memory with it) while other parsers are alive.
  const others = Array.from({ length: 50 }, () => new HttpParser("response"));
  const size = 4 * 1024 * 1024;
  const head = bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`);
  const answer = new Uint8Array(head.length + size + 5);
  answer.set(head);
  answer.set(bytes("HTTP/"), head.length + size);
  const parser = new HttpParser("response");
  assert.deepEqual(parser.execute(answer), {
    kind: "complete",
    at: head.length + size,
    status: 200,
  });
  for (const other of others) {
    assert.deepEqual(other.execute(bytes("HTTP/1.1 204 No Content\r\n\r\n")), {
      kind: "complete",
      at: 27,
      status: 204,
    });
    other.close();
  }
  parser.close();
  parser.close(); // twice is harmless
});
