import assert from "node:assert/strict";
import { tryPattern } from "./language.ts";
import { parsePattern } from "./pattern/parse_pattern.ts";
import { needsLinearEngine } from "./pattern/backtracking.ts";

const ACCESS = `IPV4:client ' - ' NSPACE:user ' [' HTTPDATE:time '] "' WORD:method ' ' ` +
  `NSPACE:path ' ' LD '" ' INT:status`;
const GOOD = `10.0.0.5 - ann [01/May/2024:10:00:01 +0000] "GET /index.html HTTP/1.1" 200`;

Deno.test("a pattern tried on a line gives where each field's text lies in it", () => {
  const trial = tryPattern(ACCESS, [GOOD], "UTC");
  assert.ok(trial.ok);
  const spans = trial.lines[0]!.spans;
  const text = (name: string) => GOOD.slice(spans[name]![0], spans[name]![1]);
  assert.equal(text("client"), "10.0.0.5");
  assert.equal(text("user"), "ann");
  assert.equal(text("time"), "01/May/2024:10:00:01 +0000");
  assert.equal(text("path"), "/index.html");
  assert.equal(text("status"), "200");
  assert.equal(trial.lines[0]!.stop, null);
});

Deno.test("a line that fails: where matching stopped, the element that failed, the fields before", () => {
  const badTime = `10.0.0.5 - ann [01/May/2024 10:00:01] "GET / HTTP/1.1" 200`;
  const badStatus = `10.0.0.5 - ann [01/May/2024:10:00:01 +0000] "GET /a HTTP/1.1" x`;
  const trial = tryPattern(ACCESS, [badTime, "nonsense", badStatus], "UTC");
  assert.ok(trial.ok);
  const [time, nonsense, status] = trial.lines;
  assert.equal(time!.row, null);
  assert.deepEqual(time!.stop, {
    at: badTime.indexOf("[") + 1,
    element: { offset: ACCESS.indexOf("HTTPDATE"), text: "HTTPDATE:time" },
  });
  assert.deepEqual(Object.keys(time!.spans), ["client", "user"]);
  assert.deepEqual(nonsense!.stop, { at: 0, element: { offset: 0, text: "IPV4:client" } });
  assert.deepEqual(nonsense!.spans, {});
  // After an LD: the literal after it was found, the INT was not.
  assert.equal(status!.stop!.at, badStatus.length - 1);
  assert.equal(status!.stop!.element.text, "INT:status");
});

Deno.test("a lazy LD last before the failing element: matching stopped where the LD began", () => {
  const trial = tryPattern(`WORD:a ' ' LD ' end'`, ["abc xyz"], "UTC");
  assert.ok(trial.ok);
  assert.deepEqual(trial.lines[0]!.stop, { at: 4, element: { offset: 14, text: "' end'" } });
});

Deno.test("spans on the linear-time engine, for a pattern that could backtrack without bound", () => {
  const pattern = `LD:a 'x' NSPACE:b ' ' INT:n`;
  const parsed = parsePattern(pattern);
  assert.ok(parsed.ok && needsLinearEngine(parsed.elements), "a pattern for the linear engine");
  const line = "aaa xxyz 42";
  const trial = tryPattern(pattern, [line], "UTC");
  assert.ok(trial.ok);
  const spans = trial.lines[0]!.spans;
  assert.deepEqual(trial.rows[0], { a: "aaa ", b: "xyz", n: 42 });
  assert.equal(line.slice(...spans.b!), "xyz");
  assert.equal(line.slice(...spans.n!), "42");
});
