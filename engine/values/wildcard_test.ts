import assert from "node:assert/strict";
import { compileWildcard, literalTokens, STAR, type WildcardToken } from "./wildcard.ts";
import { seededRandom } from "../../tests/support/seeded_random.ts";
import { cpuStopwatch } from "../../tests/support/thread_cpu.ts";

/** The same pattern as an anchored RegExp: the reference the matcher must agree with. */
function reference(tokens: readonly WildcardToken[]): RegExp {
  const source = tokens.map((t) => {
    switch (t.kind) {
      case "star":
        return "[\\s\\S]*";
      case "one":
        return "[\\s\\S]";
      case "digit":
        return "[0-9]";
      case "char":
        return RegExp.escape(String.fromCodePoint(t.code));
    }
  }).join("");
  return new RegExp(`^${source}$`, "u");
}

Deno.test("compileWildcard() agrees with the equivalent RegExp on random patterns and texts", () => {
  const r = seededRandom(7);
  const alphabet = ["a", "b", "1", "\u{1F600}"];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  for (let n = 0; n < 5000; n++) {
    const tokens: WildcardToken[] = [];
    for (let k = Math.floor(r() * 7); k > 0; k--) {
      const x = r();
      tokens.push(
        x < 0.3
          ? STAR
          : x < 0.45
          ? { kind: "one" }
          : x < 0.55
          ? { kind: "digit" }
          : literalTokens(pick(alphabet))[0]!,
      );
    }
    let text = "";
    for (let k = Math.floor(r() * 9); k > 0; k--) text += pick(alphabet);
    const want = reference(tokens).test(text);
    const w = compileWildcard(tokens);
    assert.equal(w.test(text), want, `${JSON.stringify(tokens)} on ${text}`);
    assert.equal(w.positions(text) !== null, want);
  }
});

Deno.test("positions() gives where each token matched", () => {
  const w = compileWildcard([...literalTokens("app-"), { kind: "digit" }, { kind: "digit" }, STAR]);
  assert.deepEqual(w.positions("app-42.log"), [0, 1, 2, 3, 4, 5, 6]);
  assert.equal(w.positions("app-4x.log"), null);
});

Deno.test("a pattern that backtracks exponentially in a RegExp takes linear time here", () => {
  const tokens: WildcardToken[] = [];
  for (let k = 0; k < 8; k++) tokens.push(STAR, ...literalTokens("a"), { kind: "one" });
  tokens.push(STAR, ...literalTokens("b"));
  const started = cpuStopwatch();
  assert.equal(compileWildcard(tokens).test("a".repeat(20_000)), false);
  assert.ok(started() < 500, `${started()} ms`);
});
