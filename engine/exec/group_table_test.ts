import assert from "node:assert/strict";
import { GroupTable } from "./group_table.ts";
import fc from "fast-check";
import { IpAddr, type Row } from "../values/values.ts";
import { valueKey } from "../values/value_ops.ts";

function groups(values: readonly Row[string][]): number[] {
  const table = new GroupTable([{ fn: (row) => row.k!, label: "k" }]);
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
  const a = new GroupTable([{ fn: (row) => row.k!, label: "k" }]);
  const b = new GroupTable([{ fn: (row) => row.k!, label: "k" }]);
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
    { fn: (row) => row.a!, label: "a" },
    { fn: (row) => row.b!, label: "b" },
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

/** The numbering by the values' keys in one Map, as before the IPv4 table: the reference. */
function referenceGroups(values: readonly Row[string][]): number[] {
  const seen = new Map<unknown, number>();
  return values.map((v) => {
    const key = valueKey(v);
    let g = seen.get(key);
    if (g === undefined) seen.set(key, g = seen.size);
    return g;
  });
}

Deno.test("GroupTable groups IP addresses by value as the keys' map does: v4 and v6 mixed, nulls, numbers", () => {
  // A small pool, so that keys repeat; bits at the edges of uint32 and keys that probe alike.
  const v4 = fc.oneof(
    fc.constantFrom(0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0x0a000001, 0xc0a80001),
    fc.integer({ min: 0, max: 0xffffffff }),
  ).map((bits) => new IpAddr(4, bits));
  const v6 = fc.oneof(
    fc.constantFrom(0n, 1n, 0xffffn << 32n, (0xffffn << 32n) | 0x0a000001n),
    fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
  ).map((bits) => new IpAddr(6, bits));
  const value = fc.oneof(
    v4,
    v4,
    v6,
    fc.constant(null),
    fc.constantFrom(1, 0x80000000, 200, "10.0.0.1", "\u0000i1"),
  );
  fc.assert(
    fc.property(
      fc.array(value, { maxLength: 300 }).chain((xs) =>
        // Repeat some of the values drawn, as equal but distinct objects.
        fc.array(fc.nat({ max: Math.max(0, xs.length - 1) }), { maxLength: 300 }).map((picks) =>
          xs.length === 0 ? xs : [
            ...xs,
            ...picks.map((k) => {
              const v = xs[k]!;
              return v instanceof IpAddr ? new IpAddr(v.version, v.bits) : v;
            }),
          ]
        )
      ),
      (values) => {
        assert.deepEqual(groups(values), referenceGroups(values));
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("GroupTable keeps thousands of IPv4 groups through the table's growth", () => {
  const values: IpAddr[] = [];
  for (let k = 0; k < 50_000; k++) values.push(new IpAddr(4, Math.imul(k, 2654435761) >>> 0));
  for (let k = 0; k < 50_000; k += 7) values.push(new IpAddr(4, Math.imul(k, 2654435761) >>> 0));
  // Keys that collide in the hash's top bits sit beside each other.
  for (let k = 0; k < 2_000; k++) values.push(new IpAddr(4, k << 20));
  assert.deepEqual(groups(values), referenceGroups(values));
});
