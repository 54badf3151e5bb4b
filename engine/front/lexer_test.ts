import assert from "node:assert/strict";
import { describeToken, lex, type Token } from "./lexer.ts";

/** `kind:text` for each token except the final eof, for compact assertions. */
function kinds(text: string): string[] {
  const { tokens, diagnostics } = lex(text);
  assert.deepEqual(diagnostics, [], `unexpected diagnostics for ${text}`);
  return tokens.slice(0, -1).map((t) => `${t.kind}:${t.text}`);
}

function only(text: string): Token {
  const { tokens, diagnostics } = lex(text);
  assert.deepEqual(diagnostics, []);
  assert.equal(tokens.length, 2, `one token expected in ${text}`);
  return tokens[0]!;
}

Deno.test("lex() skips line and block comments", () => {
  assert.deepEqual(kinds("a // rest of line\n/* block\n spans */ b"), ["ident:a", "ident:b"]);
});

Deno.test("lex() lower-cases keywords but keeps identifiers as written", () => {
  assert.deepEqual(kinds("AND Or nOt Status"), [
    "keyword:and",
    "keyword:or",
    "keyword:not",
    "ident:Status",
  ]);
});

Deno.test("lex() reads backquoted field names, which are never keywords", () => {
  assert.deepEqual(kinds("`user agent` `desc`"), ["quoted:user agent", "quoted:desc"]);
});

Deno.test("lex() decodes escapes in quoted strings", () => {
  assert.equal(only(String.raw`'a\nb\tc\\d\'e\"f\u0041'`).text, "a\nb\tc\\d'e\"fA");
  assert.equal(only(String.raw`"it's"`).text, "it's");
  // A carriage return, as CRLF logs hold: `replace(line, '\r', '')`.
  assert.equal(only(String.raw`'a\r\nb'`).text, "a\r\nb");
});

Deno.test("lex() keeps triple-quoted strings raw and multi-line", () => {
  assert.equal(only("'''a\\n 'b'\nc'''").text, "a\\n 'b'\nc");
});

Deno.test("lex() types integers by size and suffix", () => {
  assert.equal(only("42").numberKind, "INTEGER");
  assert.equal(only("2147483647").numberKind, "INTEGER");
  assert.equal(only("2147483648").numberKind, "LONG");
  const long = only("42L");
  assert.equal(long.numberKind, "LONG");
  assert.equal(long.num, 42);
});

Deno.test("lex() reads decimals and exponents as DOUBLE", () => {
  assert.deepEqual([only("3.5").num, only("3.5").numberKind], [3.5, "DOUBLE"]);
  assert.deepEqual([only("1e3").num, only("1e3").numberKind], [1000, "DOUBLE"]);
  assert.equal(only("1.5").kind, "number");
});

Deno.test("lex() reads unquoted IPv4 addresses and networks", () => {
  const ip = only("192.168.0.1");
  assert.equal(ip.kind, "ip");
  assert.equal(ip.num, 0xc0a80001);
  const net = only("10.0.0.0/8");
  assert.deepEqual([net.kind, net.num, net.prefix], ["net", 0x0a000000, 8]);
});

Deno.test("lex() joins number-unit pairs into one interval", () => {
  assert.equal(only("15 min").num, 15 * 60_000);
  assert.equal(only("1 h 30 min").num, 90 * 60_000);
  assert.equal(only("500ms").num, 500);
  assert.equal(only("1 DAY").num, 86_400_000);
  assert.deepEqual(kinds("1 h 30"), ["interval:1 h", "number:30"]);
});

Deno.test("lex() treats unit words as units only right after a number", () => {
  assert.deepEqual(kinds("d = 5 m"), ["ident:d", "punct:=", "interval:5 m"]);
  assert.deepEqual(kinds("5 and m"), ["number:5", "keyword:and", "ident:m"]);
});

Deno.test("lex() reads $name, @name, @1 and @[path]", () => {
  assert.deepEqual(kinds("$since @hits @2 @[ /user/t.sxt ]"), [
    "param:since",
    "stream:hits",
    "position:2",
    "stored:/user/t.sxt",
  ]);
});

Deno.test("lex() prefers the longest operator", () => {
  assert.deepEqual(
    kinds(":: : <= < <> >= != ~ % |").map((k) => k.slice("punct:".length)),
    ["::", ":", "<=", "<", "<>", ">=", "!=", "~", "%", "|"],
  );
});

Deno.test("lex() gives 1-based line and column of each token", () => {
  const { tokens } = lex("a\n  \tbb");
  assert.deepEqual([tokens[1]!.line, tokens[1]!.column, tokens[1]!.offset], [2, 4, 5]);
});

Deno.test("lex() reports lexical mistakes with their position and goes on", () => {
  const { tokens, diagnostics } = lex('a \'open\nb # c "x\\q" 300.1.1.1 10.0.0.0/33 5 xyz');
  assert.deepEqual(
    diagnostics.map((d) => [d.line, d.column, d.message.split(":")[0]]),
    [
      [1, 3, "unterminated string"],
      [2, 3, "unexpected character '#'"],
      [2, 9, "invalid escape '\\q' in a string; escapes are \\n \\r \\t \\\\ \\' \\\" \\uXXXX"],
      [2, 13, "invalid IPv4 address '300.1.1.1'"],
      [2, 23, "invalid IPv4 network '10.0.0.0/33'"],
    ],
  );
  assert.ok(tokens.some((t) => t.kind === "ident" && t.text === "c"));
});

Deno.test("lex() refuses a number glued to a word that is not a unit", () => {
  const { diagnostics } = lex("5xyz");
  assert.match(diagnostics[0]!.message, /invalid number '5xyz'/);
});

Deno.test("lex() refuses integers beyond 2^53 instead of rounding them", () => {
  const { diagnostics } = lex("9007199254740993");
  assert.match(diagnostics[0]!.message, /too large/);
});

Deno.test("lex() reports an unterminated block comment", () => {
  const { diagnostics } = lex("a /* never closed");
  assert.deepEqual([diagnostics[0]!.line, diagnostics[0]!.column], [1, 3]);
});

Deno.test("describeToken() names tokens as messages show them", () => {
  const { tokens } = lex("; and foo 'x' 42");
  assert.deepEqual(tokens.map(describeToken), [
    "';'",
    "keyword 'and'",
    "'foo'",
    "string 'x'",
    "number 42",
    "the end of the script",
  ]);
});

Deno.test("lex() refuses dotted numbers that are not an IPv4 address", () => {
  for (const text of ["1.2.3", "1.2.3.4.5"]) {
    assert.match(
      lex(text).diagnostics[0]!.message,
      /invalid IPv4 address '[\d.]+': it has four parts/,
    );
  }
});

Deno.test("lex() refuses a DOUBLE that overflows", () => {
  assert.match(lex("1e999").diagnostics[0]!.message, /too large for a DOUBLE/);
});
