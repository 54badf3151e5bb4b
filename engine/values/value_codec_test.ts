import assert from "node:assert/strict";
import { Interval, IpAddr, IpNet, type Row, Timestamp } from "./values.ts";
import { decodeRow, encodeRow } from "./value_codec.ts";

Deno.test("rows keep every kind of value across a structured clone", () => {
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
