import assert from "node:assert/strict";
import { GroupTable } from "./group_table.ts";
import { IpAddr, type Row } from "../values.ts";

function groups(values: readonly Row[string][]): number[] {
  const table = new GroupTable([{ fn: (row) => row.k, label: "k" }]);
  return values.map((k) => {
    const g = table.find({ k });
    return g >= 0 ? g : table.add();
  });
}

Deno.test("GroupTable numbers groups in order of first appearance, whatever the key's kind", () => {
  assert.deepEqual(
    groups([200, "200", 404, 200, 0, -0, 70000, 1.5, 70000, null, "200", new IpAddr(4, 200), 404]),
    [0, 1, 2, 0, 3, 3, 4, 5, 4, 6, 1, 7, 2],
  );
});

Deno.test("GroupTable keeps small integer keys of separate tables apart", () => {
  const a = new GroupTable([{ fn: (row) => row.k, label: "k" }]);
  const b = new GroupTable([{ fn: (row) => row.k, label: "k" }]);
  assert.equal(a.find({ k: 7 }), -1);
  assert.equal(a.add(), 0);
  assert.equal(b.find({ k: 7 }), -1);
  assert.equal(a.find({ k: 7 }), 0);
  assert.equal(a.size, 1);
});

Deno.test("GroupTable puts equal fractional keys in one group and others apart", () => {
  assert.deepEqual(groups([1.5, 1.5, 2.5, 0.5, 2.5, 1.5, 65535.5, 65535.5]), [
    0,
    0,
    1,
    2,
    1,
    0,
    3,
    3,
  ]);
  assert.deepEqual(groups([1, 1.5, 1, 1.5]), [0, 1, 0, 1]);
});

Deno.test("GroupTable keeps composite keys apart whose strings only join alike", () => {
  const table = new GroupTable([
    { fn: (row) => row.a, label: "a" },
    { fn: (row) => row.b, label: "b" },
  ]);
  const group = (a: Row[string], b: Row[string]) => {
    const g = table.find({ a, b });
    return g >= 0 ? g : table.add();
  };
  assert.deepEqual(
    [group("as", "b"), group("a", "sb"), group("as", "b"), group("a", "sb"), group("", "asb")],
    [0, 1, 0, 1, 2],
  );
  assert.deepEqual([group(1, "2"), group("1", 2), group(null, "N"), group("N", null)], [
    3,
    4,
    5,
    6,
  ]);
});
