import assert from "node:assert/strict";
import type { Expr } from "../front/ast.ts";
import { QueryError } from "../front/diagnostics.ts";
import { parseIp } from "../values/ip.ts";
import { parse } from "../front/parser.ts";
import { toJsonValue } from "../render/render.ts";
import { type Field, scalar, type Type } from "../values/types.ts";
import { type Row, Timestamp, type Value } from "../values/values.ts";
import { compileExpr } from "../expr/compile_expr.ts";
import type { Scope } from "../expr/scope.ts";

function expr(text: string): Expr {
  const r = parse(`@x | select(${text})`);
  assert.deepEqual(r.diagnostics, [], text);
  const st = r.script.statements[0]!;
  assert.ok(st.kind === "pipeline" && st.pipeline.commands[0]?.kind === "select");
  return st.pipeline.commands[0].items[0]!.expr;
}

const T0 = Date.UTC(2024, 4, 1, 22, 30, 15, 250); // 2024-05-02 00:30 in Berlin
const fields: Field[] = [
  { name: "s", type: scalar("STRING"), nullable: true },
  { name: "ns", type: scalar("STRING"), nullable: true },
  { name: "t", type: scalar("TIMESTAMP"), nullable: true },
  { name: "nt", type: scalar("TIMESTAMP"), nullable: true },
  { name: "ip", type: scalar("IPADDR"), nullable: true },
  { name: "i", type: scalar("INTEGER"), nullable: true },
];
const SCOPE: Scope = {
  fields: new Map(fields.map((f) => [f.name, f])),
  params: new Map<string, { value: Value; type: Type }>(),
  timeZone: "Europe/Berlin",
  now: T0,
};
const ROW: Row = {
  s: "  Hello, World  ",
  ns: null,
  t: new Timestamp(T0),
  nt: null,
  ip: parseIp("192.168.37.200"),
  i: 42,
};

function run(text: string, row: Row = ROW): unknown {
  return toJsonValue(compileExpr(expr(text), SCOPE)(row), { timeZone: "UTC" });
}

/** [expression, expected JSON rendering (timestamps in UTC)] */
const NORMAL: [string, unknown][] = [
  ["lower('AbC')", "abc"],
  ["UPPER('AbC')", "ABC"],
  ["len('héllo')", 5],
  ["substr('abcdef', 2)", "bcdef"],
  ["substr('abcdef', 2, 3)", "bcd"],
  ["substr('abcdef', 0, 2)", "a"],
  ["substr('abc', 5)", ""],
  // Characters, not UTF-16 units: an emoji is one, never cut in half.
  ["len('héllo😀')", 6],
  ["len(split('a,b,c', ','))", 3],
  ["len(split('', ','))", 1],
  ["substr('😀ab', 2)", "ab"],
  ["substr('😀ab', 1, 1)", "😀"],
  ["substr('a😀b😀', 2, 2)", "😀b"],
  ["substr('a😀b', 0, 2)", "a"],
  ["trim(s)", "Hello, World"],
  ["contains(s, 'World')", true],
  ["starts_with('abc', 'ab')", true],
  ["ends_with('abc', 'ab')", false],
  ["replace('a.b.c', '.', '$&')", "a$&b$&c"],
  ["split('a,b,,c', ',')", ["a", "b", "", "c"]],
  ["concat('a', ns, 1, true, ip)", "a1true192.168.37.200"],
  ["concat(t)", "2024-05-02T00:30:15.250+02:00"],
  ["regex_extract('user=eve id=7', 'id=(\\\\d+)', 1)", "7"],
  ["regex_extract('user=eve', 'u(s)er')", "user"],
  ["regex_extract('abc', 'x(y)', 1)", null],
  ["regex_replace('id=17 id=245', '''id=(\\d+)''', 'id=<$1>')", "id=<17> id=<245>"],
  ["regex_replace('a.b', '''\\.''', '$$')", "a$b"],
  ["regex_replace(ns, 'a', 'b')", null],
  // Unbounded repetition runs on re2js (linear): the same replacement syntax.
  ["regex_replace('aaa-b aa', '''(a+)+''', '<$1>')", "<aaa>-b <aa>"],
  ["now()", "2024-05-01T22:30:15.250+00:00"],
  ["TIMESTAMP(1730800801.987, 's')", "2024-11-05T10:00:01.987+00:00"],
  ["TIMESTAMP('1730800801987', 'ms')", "2024-11-05T10:00:01.987+00:00"],
  ["TIMESTAMP(1730800801987654, 'us')", "2024-11-05T10:00:01.987+00:00"],
  ["TIMESTAMP(1.730800801987e18, 'ns')", "2024-11-05T10:00:01.987+00:00"],
  ["TIMESTAMP('soon', 's')", null],
  // No year in the format: the year of now() (2024-05-02 in Berlin), or the one before.
  ["TIMESTAMP('Apr  1 10:00:00', 'MMM  d HH:mm:ss')", "2024-04-01T08:00:00.000+00:00"],
  ["TIMESTAMP('Dec 31 10:00:00', 'MMM d HH:mm:ss')", "2023-12-31T09:00:00.000+00:00"],
  ["T('2024-05-01 13:00:00')", "2024-05-01T11:00:00.000+00:00"],
  ["time_trunc(t, 1 hour)", "2024-05-01T22:00:00.000+00:00"],
  ["time_trunc(t, 1 day)", "2024-05-01T22:00:00.000+00:00"],
  ["time_trunc(t, '15 min')", "2024-05-01T22:30:00.000+00:00"],
  ["format_time(t, 'yyyy-MM-dd HH:mm')", "2024-05-02 00:30"],
  ["format_time(t, 'yyyy-MM-dd HH:mm', 'America/New_York')", "2024-05-01 18:30"],
  ["hour(t)", 0],
  ["day(t)", 2],
  ["hour(T('2024-03-31 03:30:00'))", 3],
  ["IP('2001:DB8::1')", "2001:db8::1"],
  ["NET('10.1.2.3/8')", "10.0.0.0/8"],
  ["ip_trunc(ip, 24)", "192.168.37.0"],
  ["ip_trunc(IP('2001:db8:1:2::1'), 32)", "2001:db8::"],
  ["INTEGER('42')", 42],
  ["INTEGER(3.9)", 3],
  ["INTEGER(-3.9)", -3],
  ["LONG('5000000000')", 5000000000],
  ["LONG('0x1eba8')", 125864],
  ["INTEGER(' -0X10 ')", -16],
  ["LONG('0x1FFFFFFFFFFFFF')", 9007199254740991],
  ["DOUBLE('2.5e1')", 25],
  ["DOUBLE(i)", 42],
  ["STRING(i)", "42"],
  ["STRING(ip)", "192.168.37.200"],
  ["BOOLEAN('TRUE')", true],
  ["BOOLEAN(0)", false],
  ["TIMESTAMP('2024-05-01T00:00:00Z')", "2024-05-01T00:00:00.000+00:00"],
  ["TIMESTAMP('01.05.2024 02:00', 'dd.MM.yyyy HH:mm')", "2024-05-01T00:00:00.000+00:00"],
  ["TIMESTAMP(0)", "1970-01-01T00:00:00.000+00:00"],
  ["coalesce(ns, 'fallback')", "fallback"],
  ["coalesce(ns, null)", null],
  ["coalesce(i, 2.5)", 42],
  ["if(i > 40, 'big', 'small')", "big"],
  ["if(ns = 'x', 'yes', 'no')", "no"],
];

Deno.test("every function computes its result on normal input", () => {
  for (const [text, want] of NORMAL) assert.deepEqual(run(text), want, text);
});

/** Null in, null out; casts of bad input give null too, never an error. */
const NULLS: string[] = [
  "lower(ns)",
  "upper(ns)",
  "len(ns)",
  "substr(ns, 1)",
  "substr('abc', null)",
  "trim(ns)",
  "contains(ns, 'a')",
  "starts_with('a', ns)",
  "ends_with(ns, ns)",
  "replace(ns, 'a', 'b')",
  "split(ns, ',')",
  "regex_extract(ns, 'a')",
  "T(ns)",
  "time_trunc(nt, 1 hour)",
  "format_time(nt, 'yyyy')",
  "format_time(t, 'yyyy', ns)",
  "hour(nt)",
  "day(nt)",
  "IP(ns)",
  "NET(ns)",
  "ip_trunc(IP(ns), 8)",
  "INTEGER(ns)",
  "INTEGER('abc')",
  "INTEGER('3000000000')",
  "LONG('12x')",
  "LONG('0x')",
  "INTEGER('0x80000000')",
  "LONG('0x20000000000000')",
  "DOUBLE('0x10')",
  "DOUBLE('x')",
  "BOOLEAN('maybe')",
  "TIMESTAMP('not a time')",
  "TIMESTAMP('2024-05-01', 'dd.MM.yyyy')",
  "IP(s)",
  "NET(s)",
  "T(s)",
  "coalesce(ns, ns)",
];

Deno.test("functions give null for null input, and casts give null for bad input", () => {
  for (const text of NULLS) assert.equal(run(text), null, text);
});

const BAD: [string, string, RegExp][] = [
  ["lower(1)", "TYPE_ERROR", /first argument of lower must be STRING, found INTEGER/],
  ["len()", "ARITY", /len\(x STRING or ARRAY\) takes 1 argument, found 0/],
  ["len(1)", "TYPE_ERROR", /len needs a STRING \(its characters\) or an ARRAY \(its elements\)/],
  ["substr('a', 'b')", "TYPE_ERROR", /second argument of substr must be INTEGER or LONG/],
  ["substr('a', 1, 2, 3)", "ARITY", /takes 2 to 3 arguments, found 4/],
  ["replace('a', 'b')", "ARITY", /takes 3 arguments/],
  ["concat()", "ARITY", /takes at least 1 argument/],
  ["regex_extract(s, '(')", "TYPE_ERROR", /invalid regular expression '\('/],
  ["now(1)", "ARITY", /now\(\) takes 0 arguments/],
  ["T('2024-99-99')", "TYPE_ERROR", /is not a timestamp/],
  [
    "time_trunc(t, 'often')",
    "TYPE_ERROR",
    /second argument of time_trunc must be INTERVAL .* found "often"/,
  ],
  ["time_trunc(i, 1 hour)", "TYPE_ERROR", /first argument of time_trunc must be TIMESTAMP/],
  ["format_time(t, 'yyyy-QQ')", "TYPE_ERROR", /unknown letter 'Q'/],
  ["format_time(t, 'yyyy', 'Mars/Base')", "TYPE_ERROR", /unknown time zone 'Mars\/Base'/],
  ["hour('x')", "TYPE_ERROR", /first argument of hour must be TIMESTAMP; 'x' is not one/],
  ["IP('1.2.3.999')", "TYPE_ERROR", /IP: "1.2.3.999" is not an IP address/],
  ["NET('10.0.0.0/99')", "TYPE_ERROR", /NET: "10.0.0.0\/99" is not a network/],
  ["ip_trunc(ip, 'x')", "TYPE_ERROR", /second argument of ip_trunc must be INTEGER or LONG/],
  ["TIMESTAMP(s, 'yyyy-QQ')", "TYPE_ERROR", /unknown letter 'Q'/],
  ["coalesce(ip, 'x')", "TYPE_ERROR", /coalesce needs arguments of one type, found IPADDR, STRING/],
  ["if(i, 1, 2)", "TYPE_ERROR", /first argument of if must be BOOLEAN, found INTEGER/],
  ["if(true, 1, 'x')", "TYPE_ERROR", /branches of if must have one type/],
  ["coalesce()", "ARITY", /takes at least 1 argument/],
];

Deno.test("functions refuse bad arguments with a message naming the function", () => {
  for (const [text, code, message] of BAD) {
    assert.throws(() => compileExpr(expr(text), SCOPE), (e: unknown) => {
      assert.ok(e instanceof QueryError, text);
      assert.equal(e.diagnostic.code, code, `${text}: ${e.message}`);
      assert.match(e.diagnostic.message, message, text);
      assert.equal(e.diagnostic.line, 1);
      return true;
    });
  }
});

Deno.test("function names are case-insensitive", () => {
  assert.equal(run("LoWeR('X')"), "x");
  assert.equal(run("Time_Trunc(t, 1 h) = TIME_TRUNC(t, 1 h)"), true);
});
