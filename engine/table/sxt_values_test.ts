import assert from "node:assert/strict";
import { Interval, IpAddr, IpNet, type Row, Timestamp } from "../values/values.ts";
import {
  decodeParsedRow,
  decodeRow,
  decodeValue,
  encodeRow,
  encodeRowObject,
  encodeValue,
} from "./sxt_values.ts";

const row: Row = {
  n: 1.5,
  big: 2 ** 53,
  nan: NaN,
  inf: -Infinity,
  negZero: -0,
  s: 'say "hi"\nthen go',
  tilde: "~T1",
  tildes: "~~",
  empty: "",
  yes: true,
  none: null,
  t: new Timestamp(1_714_561_200_000),
  iv: new Interval(90_000),
  ip4: new IpAddr(4, 0xc0a80001),
  ip6: new IpAddr(6, (0x20010db8n << 96n) | 1n),
  net: new IpNet(new IpAddr(4, 0x0a000000), 8),
  arr: [1, "~x", [new Timestamp(0)], null],
  tup: { a: "~", b: { c: new Interval(-1) } },
};

Deno.test("encodeRowObject() and decodeParsedRow() give back every kind of value", () => {
  const line = encodeRowObject(row);
  assert.ok(!line.includes("\n"));
  assert.deepEqual(decodeParsedRow(JSON.parse(line)), row);
  assert.ok(Object.is(decodeParsedRow(JSON.parse(line)).negZero, -0));
});

Deno.test("encodeRowObject() writes each value as encodeValue does", () => {
  const parsed = JSON.parse(encodeRowObject(row));
  for (const [k, v] of Object.entries(row)) assert.deepEqual(parsed[k], encodeValue(v), k);
  assert.deepEqual(decodeValue(parsed.arr), row.arr);
});

Deno.test("encodeRowObject() leaves out undefined fields, as JSON.stringify does", () => {
  const sparse = { a: 1, b: undefined } as unknown as Row;
  assert.equal(encodeRowObject(sparse), '{"a":1}');
});

Deno.test("encodeRow()/decodeRow(): rows keep every kind of value across a structured clone (worker messages)", () => {
  const row: Row = {
    n: null,
    b: true,
    x: -1.5,
    s: "é",
    t: new Timestamp(1714521600123),
    i: new Interval(-5000),
    v4: new IpAddr(4, 0x0a000001),
    v6: new IpAddr(6, 1n << 100n),
    net: new IpNet(new IpAddr(4, 0x0a000000), 8),
    a: [1, [new Timestamp(0)], { k: null }],
    o: { "__proto__x": 1, nested: { t: new Timestamp(5) }, arr: [] },
    "0": "key order",
  };
  const back = decodeRow(structuredClone(encodeRow(row)));
  assert.deepEqual(back, row);
  assert.ok(back.t instanceof Timestamp && back.v6 instanceof IpAddr && back.net instanceof IpNet);
  assert.deepEqual(Object.keys(back), Object.keys(row));
});
