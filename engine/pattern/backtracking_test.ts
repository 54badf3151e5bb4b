import assert from "node:assert/strict";
import { needsLinearEngine } from "./backtracking.ts";
import { parsePattern } from "./parse_pattern.ts";
import { compilePattern } from "./compile_pattern.ts";
import { cpuStopwatch } from "../../tests/support/thread_cpu.ts";

function linear(pattern: string): boolean {
  const parsed = parsePattern(pattern);
  assert.ok(parsed.ok, pattern);
  return needsLinearEngine(parsed.elements);
}

Deno.test("the log shapes, whose runs end at a character they cannot hold, stay on V8", () => {
  for (
    const pattern of [
      `IPV4:client ' ' NSPACE:ident ' ' NSPACE:user ' [' HTTPDATE:time '] "' WORD:method ' '
       NSPACE:path ' ' NSPACE:proto '" ' INT:status ' ' (INT:bytes | '-') ' ' DQS:referer EOL`,
      "INT:n LD:x EOL",
      "LD:x 'z' EOL",
      "NSPACE:a '\" ' INT:n",
      "ISO8601:t ' ' WORD:level ' ' LD:message EOL",
      "REGEX('[a-z]{2}'):code ' ' INT:n",
    ]
  ) assert.equal(linear(pattern), false, pattern);
});

Deno.test("patterns with an ambiguous run before another run, or an unbounded REGEX, run on the linear engine", () => {
  for (
    const pattern of [
      "LD 'a' LD 'a' LD 'b' EOL",
      "WORD WORD WORD '!'",
      "NSPACE:x NSPACE:y '!'",
      "LD 'a' NSPACE:x ' '",
      "(LD:a 'x' | WORD:b) INT:n",
      "REGEX('(a+)+$'):s EOL",
    ]
  ) assert.equal(linear(pattern), true, pattern);
});

Deno.test("a pattern of ambiguous runs over a long hostile line answers at once, same rows", () => {
  const compiled = compilePattern("LD:a 'a' LD:b 'a' LD:c 'a' LD:d 'b' EOL", { timeZone: "UTC" });
  assert.ok(compiled.ok);
  const extract = compiled.pattern.makeExtractor(["a", "b", "c", "d"]);
  const started = cpuStopwatch();
  assert.equal(extract("a".repeat(20_000)), null);
  assert.ok(started() < 500, `${started()} ms`);
  // Lazy runs: the first `a`s end them, as V8 would have chosen.
  assert.deepEqual(extract("xaayazab"), { a: "x", b: "", c: "y", d: "za" });
  const two = compilePattern("LD:y 'a' NSPACE:x ' ' EOL", { timeZone: "UTC" });
  assert.ok(two.ok);
  const started2 = cpuStopwatch();
  assert.equal(two.pattern.makeExtractor(["x", "y"])("a".repeat(100_000)), null);
  assert.ok(started2() < 500, `${started2()} ms`);
});
