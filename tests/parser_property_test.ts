/**
 * Properties of the front end on random input: it never throws, every diagnostic has a place
 * inside the text, and well-formed random expressions parse to the tree they were built from.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { check } from "../engine/front/front.ts";
import { COMMAND_NAMES, parse } from "../engine/front/parser.ts";
import { printScript } from "../engine/front/printer.ts";
import { SOURCE_NAMES } from "../engine/front/source_catalog.ts";

const TOKENS = [
  "init",
  "(",
  ")",
  "[",
  "]",
  ",",
  ";",
  "|",
  ":",
  "::",
  ".",
  "=",
  "!=",
  "<>",
  "<",
  ">=",
  "+",
  "-",
  "*",
  "/",
  "%",
  "~",
  "and",
  "or",
  "not",
  "in",
  "like",
  "is",
  "null",
  "true",
  "as",
  "desc",
  "on",
  ...COMMAND_NAMES,
  "fliter",
  ...SOURCE_NAMES,
  "src",
  "pattern",
  "count",
  "sum",
  "substr",
  "T",
  "a",
  "b",
  "d",
  "`x y`",
  "$p",
  "@s",
  "@1",
  "@[/t.sxt]",
  "42",
  "42L",
  "3.5",
  "1e3",
  "10.0.0.1",
  "10.0.0.0/8",
  "5",
  "min",
  "h",
  "'s'",
  '"q\\n"',
  "'''raw'''",
  "'",
  "/*",
  "//",
  "\n",
  "IPADDR",
];

/** Asserts the result shape that must hold for any input. */
function wellFormed(text: string): void {
  const r = check(text);
  const lines = text.split("\n").length;
  for (const d of r.diagnostics) {
    assert.ok(Number.isInteger(d.line) && d.line! >= 1 && d.line! <= lines, JSON.stringify(d));
    assert.ok(Number.isInteger(d.column) && d.column! >= 1, JSON.stringify(d));
    assert.ok(d.message.length > 0);
  }
  assert.equal(r.script === undefined, r.diagnostics.length > 0);
}

Deno.test("check() never throws on arbitrary text", () => {
  fc.assert(fc.property(fc.string({ maxLength: 200 }), wellFormed), { numRuns: 500 });
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 100 }), wellFormed),
    { numRuns: 300 },
  );
});

Deno.test("check() never throws on random token soups", () => {
  const soup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).chain((tokens) =>
    fc.constantFrom(" ", "", "\n").map((sep) => tokens.join(sep))
  );
  fc.assert(fc.property(soup, wellFormed), { numRuns: 2000 });
});

Deno.test("check() never throws on token soups that start like a real pipeline", () => {
  const tail = fc.array(fc.constantFrom(...TOKENS), { maxLength: 30 }).map((t) => t.join(" "));
  fc.assert(
    fc.property(tail, (t) => wellFormed(`@s = READ_JSON(src: '/x') | ${t}; @s | filter(${t}`)),
    { numRuns: 1000 },
  );
});

interface Sample {
  readonly text: string;
  readonly printed: string;
}

const leaf: fc.Arbitrary<Sample> = fc.oneof(
  fc.constantFrom("a", "b", "status", "d", "m").map((n) => ({ text: n, printed: n })),
  fc.nat({ max: 100000 }).map((n) => ({ text: String(n), printed: String(n) })),
  fc.constantFrom("x", "it's", "").map((s) => ({
    text: `'${s.replace(/'/g, "\\'")}'`,
    printed: JSON.stringify(s),
  })),
  fc.constant({ text: "$p", printed: "$p" }),
  fc.constant({ text: "10.1.2.3", printed: "10.1.2.3" }),
  fc.constant({ text: "5 min", printed: "(interval 300000)" }),
);

/** Random expressions written with full parentheses, and their expected printed tree. */
const expr: fc.Arbitrary<Sample> = fc.letrec<{ e: Sample }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.tuple(
      fc.constantFrom("+", "-", "*", "/", "%", "=", "!=", "<", ">=", "and", "or", "like", "~"),
      tie("e"),
      tie("e"),
    ).map(([op, l, r]) => ({
      text: `(${l.text} ${op} ${r.text})`,
      printed: `(${op} ${l.printed} ${r.printed})`,
    })),
    tie("e").map((x) => ({ text: `(not (${x.text}))`, printed: `(not ${x.printed})` })),
    tie("e").map((x) => ({
      text: `((${x.text}) is not null)`,
      printed: `(is-not-null ${x.printed})`,
    })),
    fc.tuple(tie("e"), fc.array(tie("e"), { minLength: 1, maxLength: 3 })).map(([x, xs]) => ({
      text: `((${x.text}) in (${xs.map((y) => y.text).join(", ")}))`,
      printed: `(in ${x.printed} (list${xs.map((y) => " " + y.printed).join("")}))`,
    })),
    fc.array(tie("e"), { maxLength: 3 }).map((xs) => ({
      text: `coalesce(${xs.map((y) => y.text).join(", ")})`,
      printed: `(coalesce${xs.map((y) => " " + y.printed).join("")})`,
    })),
  ),
})).e;

Deno.test("parse() builds the tree a random well-formed expression was written from", () => {
  fc.assert(
    fc.property(expr, (x) => {
      const r = parse(`VALUES((a: 1)) | filter(${x.text})`);
      assert.deepEqual(r.diagnostics, []);
      assert.equal(printScript(r.script), `(pipeline (values (tuple a:1)) (filter ${x.printed}))`);
    }),
    { numRuns: 500 },
  );
});

/** A random expression written with only the parentheses precedence needs, and its tree. */
interface Ranked extends Sample {
  /** How tightly the text binds: 1 or, 2 and, 3 not, 4 comparison, 5 additive, 6 multiplicative, 9 primary. */
  readonly rank: number;
}

/** The text of `x` where the parser reads an operand of at least `rank`. */
function operand(x: Ranked, rank: number): string {
  return x.rank >= rank ? x.text : `(${x.text})`;
}

/** Left-associative operators and their rank. */
const INFIX: readonly (readonly [string, number])[] = [
  ["or", 1],
  ["and", 2],
  ["+", 5],
  ["-", 5],
  ["*", 6],
  ["/", 6],
  ["%", 6],
];

const bare: fc.Arbitrary<Ranked> = fc.letrec<{ e: Ranked }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf.map((l) => ({ ...l, rank: 9 })),
    // `not` takes an operand of its own rank or tighter: `not a and b` is `(not a) and b`.
    tie("e").map((x) => ({
      text: `not ${operand(x, 3)}`,
      printed: `(not ${x.printed})`,
      rank: 3,
    })),
    fc.tuple(fc.constantFrom(...INFIX), tie("e"), tie("e")).map(([[op, rank], l, r]) => ({
      text: `${operand(l, rank)} ${op} ${operand(r, rank + 1)}`,
      printed: `(${op} ${l.printed} ${r.printed})`,
      rank,
    })),
    // Comparisons do not chain: both sides are additive expressions.
    fc.tuple(fc.constantFrom("=", "!=", "<", ">=", "like", "~"), tie("e"), tie("e")).map((
      [op, l, r],
    ) => ({
      text: `${operand(l, 5)} ${op} ${operand(r, 5)}`,
      printed: `(${op} ${l.printed} ${r.printed})`,
      rank: 4,
    })),
    tie("e").map((x) => ({
      text: `${operand(x, 5)} is not null`,
      printed: `(is-not-null ${x.printed})`,
      rank: 4,
    })),
    fc.tuple(tie("e"), fc.array(tie("e"), { minLength: 1, maxLength: 3 })).map(([x, xs]) => ({
      text: `${operand(x, 5)} in (${xs.map((y) => y.text).join(", ")})`,
      printed: `(in ${x.printed} (list${xs.map((y) => " " + y.printed).join("")}))`,
      rank: 4,
    })),
  ),
})).e;

Deno.test("parse() builds the tree of random expressions written without needless parentheses", () => {
  fc.assert(
    fc.property(bare, (x) => {
      const r = parse(`VALUES((a: 1)) | filter(${x.text})`);
      assert.deepEqual(r.diagnostics, [], x.text);
      assert.equal(
        printScript(r.script),
        `(pipeline (values (tuple a:1)) (filter ${x.printed}))`,
        x.text,
      );
    }),
    { numRuns: 1000, seed: 16 },
  );
});
