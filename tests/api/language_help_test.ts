/**
 * Inline help for editors (issue 27, item 7) over HTTP: `GET /language` gives a signature and a
 * description per word, `POST /check` places a pattern's mistake at its element, and
 * `POST /patterns/try` says where each field lies and where a failing line stopped.
 */

import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";

Deno.test("GET /language: a signature and a description for each command, source, function and matcher", async () => {
  await using s = await startTestServer();
  const res = await s.fetch("alice", "/API/v1.0/language");
  assert.equal(res.status, 200);
  const body = await res.json();
  const help = new Map<string, { kind: string; signature: string; description: string }>(
    body.help.map((h: { kind: string; name: string }) => [`${h.kind} ${h.name}`, h]),
  );
  for (const c of body.commands) assert.ok(help.has(`command ${c}`), c);
  for (const f of body.functions) assert.ok(help.has(`function ${f.name}`), f.name);
  for (const m of body.matchers) assert.ok(help.has(`matcher ${m}`), m);
  for (const src of body.sources) assert.ok(help.has(`source ${src}`), src);
  assert.equal(help.get("function substr")!.signature, "substr(s, start [, len])");
  assert.match(help.get("matcher HTTPDATE")!.description, /10\/Oct\/2024:13:55:36/);
  assert.match(help.get("command filter")!.description, /Keeps the rows/);
  const anonymous = await fetch(`${s.url}/API/v1.0/language`);
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
});

async function check(s: Awaited<ReturnType<typeof startTestServer>>, script: string) {
  const res = await s.fetch("alice", "/API/v1.0/check?scriptPath=/user", {
    method: "POST",
    body: script,
    headers: { "Content-Type": "text/plain" },
  });
  return (await res.json()).diagnostics as { line: number; column: number; message: string }[];
}

Deno.test("POST /check marks a pattern's mistake at the matcher, not at the opening quotes", async () => {
  await using s = await startTestServer();
  const raw = "PARSE(pattern: '''IPV4:ip\n     ' ' WROD:w''', src: '/user/x.log')";
  const [d] = await check(s, raw);
  assert.match(d!.message, /unknown matcher 'WROD' \(did you mean 'WORD'\?\)/);
  // Line 2, where WROD is: `     ' ' WROD`.
  assert.deepEqual([d!.line, d!.column], [2, 10]);
  // In a quoted string with escapes, each escape is one character of the pattern.
  const quoted = "PARSE(pattern: 'IPV4:ip \\' \\' WROD:w', src: '/user/x.log')";
  const [q] = await check(s, quoted);
  assert.deepEqual([q!.line, q!.column], [1, quoted.indexOf("WROD") + 1]);
  // A pattern bound to a constant: its mistake is placed where the constant is written.
  const bound = "$p = 'IPV4:ip WROD:w';\nPARSE(pattern: $p, src: '/user/x.log')";
  const [c] = await check(s, bound);
  assert.deepEqual([c!.line, c!.column], [1, bound.indexOf("WROD") + 1]);
});

Deno.test("POST /patterns/try: each field's place in its line; where a failing line stopped", async () => {
  await using s = await startTestServer();
  const res = await s.fetch("alice", "/API/v1.0/patterns/try", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      pattern: "IPV4:ip ' ' INT:status",
      lines: ["10.0.0.1 200", "10.0.0.1 OK"],
    }),
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(body.lines, [
    { row: { ip: "10.0.0.1", status: 200 }, spans: { ip: [0, 8], status: [9, 12] }, stop: null },
    {
      row: null,
      spans: { ip: [0, 8] },
      stop: { at: 9, element: { offset: 12, text: "INT:status" } },
    },
  ]);
});
