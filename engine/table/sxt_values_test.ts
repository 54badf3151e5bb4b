import assert from "node:assert/strict";
import { Interval, IpAddr, IpNet, type Row, Timestamp } from "../values/values.ts";
import {
  decodeParsedRow,
  decodeRow,
  decodeValue,
  encodeRow,
  encodeRowColumns,
  encodeRowObject,
  encodeValue,
  rowOfColumns,
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

Deno.test("encodeRowColumns()/rowOfColumns(): rows of the same fields keep every value across a structured clone, as arrays", () => {
  const rows: Row[] = [
    { ip: new IpAddr(4, 0xffffffff), n: -0, mixed: new IpAddr(4, 1), any: row.tup!, k: "~x" },
    { ip: new IpAddr(4, 0), n: NaN, mixed: new IpAddr(6, 1n), any: null, k: "b" },
    { ip: new IpAddr(4, 0x0a000001), n: 2 ** 53, mixed: null, any: [new Timestamp(1)], k: "" },
  ];
  const encoded = structuredClone(encodeRowColumns(rows)!);
  assert.deepEqual(encoded.names, ["ip", "n", "mixed", "any", "k"]);
  // An IPv4 column travels as its bits, a column of numbers as numbers; the others encoded.
  assert.ok(encoded.columns[0] instanceof Uint32Array);
  assert.ok(encoded.columns[1] instanceof Float64Array);
  assert.ok(Array.isArray(encoded.columns[2]) && Array.isArray(encoded.columns[4]));
  const back = rows.map((_, i) => rowOfColumns(encoded, i));
  assert.deepEqual(back, rows);
  assert.ok(Object.is(back[0]!.n, -0) && back[1]!.mixed instanceof IpAddr);
  assert.equal(back[0]!.k, "~x");
  assert.deepEqual(Object.keys(back[2]!), Object.keys(rows[2]!));
});

Deno.test("encodeRowColumns() is null for rows whose fields differ in name, number or order", () => {
  assert.equal(encodeRowColumns([]), null);
  assert.equal(encodeRowColumns([{ a: 1, b: 2 }, { b: 2, a: 1 }]), null);
  assert.equal(encodeRowColumns([{ a: 1, b: 2 }, { a: 1 }]), null);
  assert.equal(encodeRowColumns([{ a: 1 }, { a: 1, b: 2 }]), null);
  assert.equal(encodeRowColumns([{ a: 1 }, { c: 1 }]), null);
  assert.notEqual(encodeRowColumns([{ a: 1, b: 2 }, { a: 3, b: "x" }]), null);
});
