import assert from "node:assert/strict";
import type { Expr } from "../front/ast.ts";
import { QueryError } from "../front/diagnostics.ts";
import { parseIp, parseNet } from "../values/ip.ts";
import { parse } from "../front/parser.ts";
import { toJsonValue } from "../render/render.ts";
import { arrayOf, type Field, scalar, tupleOf, type Type, typeToString } from "../values/types.ts";
import { Interval, type Row, Timestamp, type Value } from "../values/values.ts";
import { compileExpr, constantValue, typeExpr } from "./compile_expr.ts";
import type { Scope } from "./scope.ts";

/** The expression of `select(<text>)`, through the real parser. */
function expr(text: string): Expr {
  const r = parse(`@x | select(${text})`);
  assert.deepEqual(r.diagnostics, [], text);
  const st = r.script.statements[0]!;
  assert.ok(st.kind === "pipeline");
  const cmd = st.pipeline.commands[0]!;
  assert.ok(cmd.kind === "select");
  return cmd.items[0]!.expr;
}

function field(name: string, type: Type): Field {
  return { name, type, nullable: true };
}

const T0 = Date.UTC(2024, 4, 1, 13);
const SCOPE: Scope = {
  fields: new Map(
    [
      field("i", scalar("INTEGER")),
      field("l", scalar("LONG")),
      field("d", scalar("DOUBLE")),
      field("s", scalar("STRING")),
      field("b", scalar("BOOLEAN")),
      field("t", scalar("TIMESTAMP")),
      field("iv", scalar("INTERVAL")),
      field("ip", scalar("IPADDR")),
      field("net", scalar("IPNET")),
      field("arr", arrayOf(scalar("STRING"))),
      field("tup", tupleOf([field("name", scalar("STRING")), field("n", scalar("INTEGER"))])),
      field("n", scalar("INTEGER")),
    ].map((f) => [f.name, f]),
  ),
  params: new Map<string, { value: Value; type: Type }>([
    ["since", { value: new Timestamp(T0 - 3_600_000), type: scalar("TIMESTAMP") }],
    ["net", { value: parseNet("2001:db8::/32"), type: scalar("IPNET") }],
  ]),
  timeZone: "Europe/Berlin",
  now: T0,
};
const OPEN: Scope = { ...SCOPE, fields: null };

const ROW: Row = {
  i: 7,
  l: 5_000_000_000,
  d: 2.5,
  s: "admin-user",
  b: true,
  t: new Timestamp(T0),
  iv: new Interval(60_000),
  ip: parseIp("10.1.2.3"),
  net: parseNet("10.0.0.0/8"),
  arr: ["a", "b"],
  tup: { name: "x", n: 3 },
  n: null,
};

function show(v: Value): unknown {
  return toJsonValue(v, { timeZone: "UTC" });
}

function run(text: string, scope = SCOPE, row: Row = ROW): unknown {
  return show(compileExpr(expr(text), scope)(row));
}

function typeOf(text: string, scope = SCOPE): string {
  return typeToString(typeExpr(expr(text), scope).type);
}

Deno.test("compileExpr() evaluates operators on typed fields", () => {
  const cases: [string, unknown, string][] = [
    ["i + 1", 8, "LONG"],
    ["i % 4", 3, "INTEGER"],
    ["i / 2", 3.5, "DOUBLE"],
    ["i / 0", null, "DOUBLE"],
    ["i % 0", null, "INTEGER"],
    ["d * 2", 5, "DOUBLE"],
    ["l + i", 5_000_000_007, "LONG"],
    ["-i", -7, "INTEGER"],
    ["n + 1", null, "LONG"],
    ["t + 1 hour", "2024-05-01T14:00:00.000+00:00", "TIMESTAMP"],
    ["t - 1 day", "2024-04-30T13:00:00.000+00:00", "TIMESTAMP"],
    ["t - $since", 3_600_000, "INTERVAL"],
    ["iv * 2", 120_000, "INTERVAL"],
    ["iv + 30 s", 90_000, "INTERVAL"],
    ["1 h / iv", 60, "DOUBLE"],
    ["i > 5 and s = 'admin-user'", true, "BOOLEAN"],
  ];
  for (const [text, want, type] of cases) {
    assert.deepEqual(run(text), want, text);
    assert.equal(typeOf(text), type, text);
  }
});

Deno.test("comparisons follow three-valued logic and null compares null", () => {
  const cases: [string, unknown][] = [
    ["n = 1", null],
    ["n != 1", null],
    ["n = null", null],
    ["n is null", true],
    ["i is not null", true],
    ["n > 1 and false", false],
    ["n > 1 and true", null],
    ["n > 1 or true", true],
    ["n > 1 or false", null],
    ["not (n > 1)", null],
    ["not b", false],
    ["i = 7.0", true],
    ["l > i", true],
    ["s < 'b'", true],
    ["'B' < 'a'", true],
    ["false < true", true],
  ];
  for (const [text, want] of cases) assert.deepEqual(run(text), want, text);
});

Deno.test("a timestamp compared with a string literal reads it as a timestamp in the zone", () => {
  assert.equal(run("t >= '2024-05-01 15:00:00'"), true); // 15:00 Berlin = 13:00 UTC
  assert.equal(run("t > '2024-05-01 15:00:00'"), false);
  assert.equal(run("t = T('2024-05-01T13:00:00Z')"), true);
  assert.equal(run("ip = '10.1.2.3'"), true);
  assert.throws(() => compileExpr(expr("t > 'soon'"), SCOPE), /'soon' is not a valid TIMESTAMP/);
});

Deno.test("like and ~ match, compiling literal patterns once", () => {
  const cases: [string, unknown][] = [
    ["s like 'adm%'", true],
    ["s like 'adm_n%'", true],
    ["s like 'admin'", false],
    ["s like '%user'", true],
    ["'a.c' like 'a.c'", true],
    ["'abc' like 'a.c'", false],
    ["'50%' like '50\\\\%'", true],
    ["s ~ '^adm[a-z]+-'", true],
    ["s ~ 'root'", false],
    ["if(b, null, s) ~ 'x'", null],
    ["s like concat('adm', '%')", true],
  ];
  for (const [text, want] of cases) assert.deepEqual(run(text), want, text);
  assert.throws(() => compileExpr(expr("s ~ '(unclosed'"), SCOPE), (e: unknown) => {
    assert.ok(e instanceof QueryError);
    assert.equal(e.diagnostic.code, "TYPE_ERROR");
    assert.match(e.message, /invalid regular expression '\(unclosed'/);
    assert.equal(e.diagnostic.column, 17);
    return true;
  });
});

Deno.test("in tests lists, networks and arrays", () => {
  const cases: [string, unknown][] = [
    ["i in (1, 7, 9)", true],
    ["i in (1, 2)", false],
    ["i in (1, null)", null],
    ["i not in (1, 2)", true],
    ["n in (1, 2)", null],
    ["s in ('x', s)", true],
    ["ip in 10.0.0.0/8", true],
    ["ip in 192.168.0.0/16", false],
    ["ip not in 192.168.0.0/16", true],
    ["ip in net", true],
    ["ip in $net", false],
    ["IP('2001:db8::5') in $net", true],
    ["ip in (192.168.0.0/16, 10.0.0.0/8)", true],
    ["'b' in arr", true],
    ["'c' in arr", false],
    ["t in ('2024-05-01 15:00:00', '2024-01-01')", true],
  ];
  for (const [text, want] of cases) assert.deepEqual(run(text), want, text);
});

Deno.test("members, indexes and tuple constructors", () => {
  assert.equal(run("tup.name"), "x");
  assert.equal(typeOf("tup.n"), "INTEGER");
  assert.equal(run("arr[1]"), "b");
  assert.equal(run("arr[5]"), null);
  assert.equal(run("split('a,b,c', ',')[2]"), "c");
  assert.deepEqual(run("(a: i, b: 'x')"), { a: 7, b: "x" });
  assert.equal(typeOf("(a: i, b: 'x')"), "TUPLE<a ?INTEGER, b STRING>");
  assert.throws(() => compileExpr(expr("tup.nope"), SCOPE), /no field 'nope'.*name, n/);
});

Deno.test("ANY operands dispatch at run time, reading strings as typed values", () => {
  const row: Row = {
    status: 503,
    when: "2024-05-01T13:00:00Z",
    client: "10.9.8.7",
    user: { name: "eve" },
    tags: ["x"],
    text: "hello",
  };
  const cases: [string, unknown][] = [
    ["status >= 500", true],
    ["status + 1", 504],
    ["when >= T('2024-05-01 00:00:00')", true],
    ["client in 10.0.0.0/8", true],
    ["user.name", "eve"],
    ["user.missing", null],
    ["tags[0]", "x"],
    ["nothing", null],
    ["status = 'x'", false],
    ["upper(text)", "HELLO"],
    ["hour(when)", 15],
  ];
  for (const [text, want] of cases) assert.deepEqual(run(text, OPEN, row), want, text);
  assert.equal(typeOf("status", OPEN), "ANY");
  assert.equal(typeOf("status = 1", OPEN), "BOOLEAN");
  assert.throws(() => run("text + 1", OPEN, row), /cannot add STRING and INTEGER/);
  assert.throws(() => run("status < 'x'", OPEN, row), /cannot compare INTEGER and STRING/);
  assert.throws(() => run("lower(status)", OPEN, row), /first argument of lower must be STRING/);
});

Deno.test("mistakes are QueryErrors with code, message and position", () => {
  const cases: [string, string, RegExp, number][] = [
    ["s + 'x'", "TYPE_ERROR", /cannot add STRING and STRING \(use concat/, 13],
    ["s + i", "TYPE_ERROR", /cannot add STRING and INTEGER/, 13],
    ["t + i", "TYPE_ERROR", /cannot add TIMESTAMP and INTEGER/, 13],
    ["i = 'x'", "TYPE_ERROR", /cannot compare INTEGER and STRING/, 13],
    ["i and b", "TYPE_ERROR", /and needs BOOLEAN operands, found INTEGER/, 13],
    ["stauts > 1", "UNKNOWN_NAME", /unknown field 'stauts'.*the fields are i, l, d/, 13],
    ["lowr(s)", "UNKNOWN_NAME", /unknown function 'lowr' \(did you mean 'lower'\?\)/, 13],
    ["lower(s, s)", "ARITY", /lower\(s STRING\) takes 1 argument, found 2/, 13],
    ["lower(i)", "TYPE_ERROR", /first argument of lower must be STRING, found INTEGER/, 19],
    ["$nope", "UNKNOWN_NAME", /unknown constant '\$nope'/, 13],
    ["ip in 5", "TYPE_ERROR", /'in' needs a list in parentheses, a network or an array/, 19],
    ["i in ('a')", "TYPE_ERROR", /cannot look for INTEGER among STRING/, 19],
    ["s.x", "TYPE_ERROR", /cannot read field 'x' of STRING/, 13],
    ["sum(s)", "TYPE_ERROR", /sum needs a number or an interval, found STRING/, 13],
    ["T('soon')", "TYPE_ERROR", /"soon" is not a timestamp/, 15],
  ];
  for (const [text, code, message, column] of cases) {
    assert.throws(() => compileExpr(expr(text), SCOPE), (e: unknown) => {
      assert.ok(e instanceof QueryError, text);
      assert.equal(e.diagnostic.code, code, text);
      assert.match(e.diagnostic.message, message, text);
      assert.equal(e.diagnostic.line, 1, text);
      assert.equal(e.diagnostic.column, column, text);
      return true;
    });
  }
});

Deno.test("constant subexpressions are folded at compile time", () => {
  assert.deepEqual(constantValue(expr("1 + 2 * 3"), SCOPE), { value: 7 });
  assert.deepEqual(
    show(constantValue(expr("T('2024-05-01 15:00:00') + 1 hour"), SCOPE)!.value),
    "2024-05-01T14:00:00.000+00:00",
  );
  assert.equal(constantValue(expr("i + 1"), SCOPE), undefined);
  assert.deepEqual(
    show(constantValue(expr("now()"), SCOPE)!.value),
    "2024-05-01T13:00:00.000+00:00",
  );
});
