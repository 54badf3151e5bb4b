import assert from "node:assert/strict";
import { printExpr, printLiteral, printScript } from "./printer.ts";
import { parse } from "./parser.ts";
import { Interval, IpAddr, IpNet, Timestamp } from "../values/values.ts";
import type { Expr } from "./ast.ts";

const at = { line: 1, column: 1, offset: 0 };

Deno.test("printScript() prints one line per statement", () => {
  const text =
    "init(a::ipaddr, `b c`: 1); $x = 1; @s = READ_JSON(src: '/x'); @s | filter(status = 200)";
  assert.equal(
    printScript(parse(text).script),
    [
      "(init a::IPADDR `b c`:1)",
      "(let $x 1)",
      `(bind @s (pipeline (read_json src:"/x")))`,
      "(pipeline @s (filter (= status 200)))",
    ].join("\n"),
  );
});

Deno.test("printScript() is deterministic: equal trees print equally", () => {
  const a = "READ_JSON(src: '/x') | select(a as b, count(*)) | group(b) | sort(@2 desc)";
  const b = "read_json( src : '/x' )|select(a AS b,count( * ))|group(b)|sort(@2 DESC)";
  assert.equal(printScript(parse(a).script), printScript(parse(b).script));
});

Deno.test("printLiteral() shows the type of numbers and the form of typed values", () => {
  assert.equal(printLiteral(42, "INTEGER"), "42");
  assert.equal(printLiteral(42, "LONG"), "42L");
  assert.equal(printLiteral(42, "DOUBLE"), "42.0");
  assert.equal(printLiteral(2.5, "DOUBLE"), "2.5");
  assert.equal(printLiteral('a"b'), `"a\\"b"`);
  assert.equal(printLiteral(null), "null");
  assert.equal(printLiteral(new IpAddr(4, 0x0a000001)), "10.0.0.1");
  assert.equal(printLiteral(new IpNet(new IpAddr(4, 0xc0a80000), 16)), "192.168.0.0/16");
  assert.equal(printLiteral(new IpAddr(6, 1n)), "(ipv6 1)");
  assert.equal(printLiteral(new Interval(1500)), "(interval 1500)");
  assert.equal(printLiteral(new Timestamp(0)), "(timestamp 0)");
  assert.equal(printLiteral([1, "x"]), `[1 "x"]`);
  assert.equal(printLiteral({ a: 1, "b c": true }), "{a:1 `b c`:true}");
});

Deno.test("printExpr() prints every expression kind in prefix form", () => {
  const lit = (value: number): Expr => ({ kind: "literal", value, span: at });
  const f: Expr = { kind: "field", name: "user agent", span: at };
  const cases: [Expr, string][] = [
    [{ kind: "position", index: 2, span: at }, "@2"],
    [{ kind: "param", name: "p", span: at }, "$p"],
    [{ kind: "star", span: at }, "*"],
    [f, "`user agent`"],
    [{ kind: "unary", op: "not", operand: f, span: at }, "(not `user agent`)"],
    [
      { kind: "in", operand: f, list: [lit(1)], isList: true, negated: true, span: at },
      "(not-in `user agent` (list 1))",
    ],
    [{ kind: "isNull", operand: f, negated: false, span: at }, "(is-null `user agent`)"],
    [{ kind: "member", object: f, name: "x", span: at }, "(. `user agent` x)"],
    [{ kind: "index", object: f, index: lit(0), span: at }, "([] `user agent` 0)"],
    [{ kind: "tuple", fields: [{ name: "a", value: lit(1), span: at }], span: at }, "(tuple a:1)"],
    [{ kind: "call", name: "LOWER", args: [f], span: at }, "(lower `user agent`)"],
  ];
  for (const [expr, printed] of cases) assert.equal(printExpr(expr), printed);
});
