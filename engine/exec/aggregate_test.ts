import assert from "node:assert/strict";
import { aggregateRows, Grouping } from "./aggregate.ts";
import { TimeSlicer } from "../plan/context.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import { engineHome } from "../../tests/support/engine_home.ts";
import { foldSpec } from "../../tests/support/fold_spec.ts";
import { Interval, IpAddr, type Row } from "../values/values.ts";
import type { RowColumns } from "../contracts/scan_workers.ts";
import { encodeRow, rowOfColumns } from "../table/sxt_values.ts";

async function* once(rows: Row[]) {
  yield rows;
}

async function run(rows: Row[]) {
  const out: Row[] = [];
  const source = aggregateRows(once(rows), {
    keys: [{ fn: (r) => r.k!, label: "k" }],
    aggregates: [
      foldSpec("count", null, "n"),
      foldSpec("count", "v", "c"),
      foldSpec("sum", "v", "s"),
    ],
    outputs: ["k", "n", "c", "s"].map((name) => ({ name, label: name, fn: (r: Row) => r[name]! })),
  }, testContext());
  for await (const b of source) out.push(...b);
  return out;
}

Deno.test("aggregateRows() folds count and sum per group as the accumulators do", async () => {
  const ip = (n: number) => new IpAddr(4, n);
  const got = await run([
    { k: ip(1), v: 2 },
    { k: "1", v: null },
    { k: ip(1), v: 3 },
    { k: 1, v: new Interval(5) },
    { k: ip(1), v: null },
    { k: 1, v: new Interval(7) },
  ]);
  // The IPv4 address 0.0.0.1, the string "1" and the number 1 are three groups, in order.
  assert.deepEqual(got, [
    { k: ip(1), n: 3, c: 2, s: 5 },
    { k: "1", n: 1, c: 0, s: null },
    { k: 1, n: 2, c: 2, s: new Interval(12) },
  ]);
});

Deno.test("aggregateRows() fails a sum of text with sum's own error", async () => {
  await assert.rejects(run([{ k: 1, v: 2 }, { k: 1, v: "x" }]), /sum needs numbers/);
});

Deno.test("aggregateRows() groups fractional DOUBLE keys: 1.5, 1.5, 2.5 are two groups", async () => {
  const got = await run([{ k: 1.5, v: 1 }, { k: 1.5, v: 2 }, { k: 2.5, v: 4 }]);
  assert.deepEqual(got, [{ k: 1.5, n: 2, c: 2, s: 3 }, { k: 2.5, n: 1, c: 1, s: 4 }]);
});

Deno.test("group() by fractional keys and by two text keys gives one row per distinct key", async () => {
  await using home = await engineHome();
  const doubles = await home.run(
    "VALUES((k: 1.5), (k: 1.5), (k: 2.5)) | select(k, count(*) as n) | group(k) | sort(k)",
  );
  assert.deepEqual(doubles.rows, [{ k: 1.5, n: 2 }, { k: 2.5, n: 1 }]);
  const pairs = await home.run(
    "VALUES((x: 'as', y: 'b'), (x: 'a', y: 'sb'), (x: 'as', y: 'b')) | " +
      "select(x, y, count(*) as n) | group(x, y) | sort(x)",
  );
  assert.deepEqual(pairs.rows, [{ x: "a", y: "sb", n: 1 }, { x: "as", y: "b", n: 2 }]);
});

Deno.test("Grouping.mergeInSlices() merges as merge() does, with a turn of the event loop between steps", async () => {
  const options = {
    keys: [{ fn: (r: Row) => r.k!, label: "k" }],
    aggregates: [foldSpec("count", null, "n"), foldSpec("sum", "v", "s")],
    outputs: ["k", "n", "s"].map((name) => ({ name, label: name, fn: (r: Row) => r[name]! })),
  };
  const shares = [0, 1].map((share) => {
    const g = new Grouping(options);
    g.add(Array.from({ length: 5000 }, (_, i) => ({ k: (i * 7 + share) % 8000 + 70_000, v: i })));
    return g.exportPartial();
  });
  const plain = new Grouping(options);
  const sliced = new Grouping(options);
  // A slice of 0 ms is always used up: one turn per step of 1024 groups.
  let turns = 0;
  const signal = new AbortController().signal;
  const slicer = new class extends TimeSlicer {
    override turn() {
      turns++;
      return super.turn();
    }
  }(signal, 0);
  try {
    for (const p of shares) {
      const a = plain.merge(p);
      assert.equal(await sliced.mergeInSlices(p, { ...testContext(signal), slicer }), a);
    }
  } finally {
    slicer.stop();
  }
  assert.deepEqual([...sliced.rows()].flat(), [...plain.rows()].flat());
  assert.equal(turns, 2 * Math.ceil(5000 / 1024));
});

Deno.test("Grouping.merge() of IPv4 keys sent as a column finds the groups by their bits, as the rows would", () => {
  // One key that is a field, as the direct path's `group(client)`.
  const byField = {
    keys: [{ fn: (r: Row) => r.client!, label: "client", field: "client" }],
    aggregates: [foldSpec("count", null, "n"), foldSpec("sum", "bytes", "b")],
    outputs: ["client", "n", "b"].map((name) => ({
      name,
      label: name,
      fn: (r: Row) => r[name]!,
    })),
  };
  const ip = (n: number) => new IpAddr(4, n);
  const shares: Row[][] = [
    [{ client: ip(7), bytes: 1 }, { client: ip(0), bytes: 2 }, { client: ip(7), bytes: 4 }],
    // 0.0.0.0 and 0.0.0.7 again, a new one, and the greatest address.
    [{ client: ip(0xffffffff), bytes: 8 }, { client: ip(0), bytes: 16 }, {
      client: ip(9),
      bytes: 32,
    }, { client: ip(7), bytes: 64 }],
    // Not addresses alone: this share's first rows are encoded one value at a time.
    [{ client: 7, bytes: 128 }, { client: ip(9), bytes: 256 }],
  ];
  const whole = new Grouping(byField);
  whole.add(shares.flat());
  const merged = new Grouping(byField);
  const partials = shares.map((rows) => {
    const g = new Grouping(byField);
    g.add(rows);
    return structuredClone(g.exportPartial());
  });
  assert.ok("names" in partials[1]!.firsts);
  assert.ok(partials[1]!.firsts.columns[0] instanceof Uint32Array);
  // The same partials with their first rows encoded one by one: the same groups, the same
  // memory charged.
  const byRows = new Grouping(byField);
  const charged = partials.map((p) => {
    const rows = "names" in p.firsts
      ? Array.from(
        { length: p.firsts.length },
        (_, i) => encodeRow(rowOfColumns(p.firsts as RowColumns, i)),
      )
      : p.firsts;
    return byRows.merge({ ...p, firsts: rows });
  });
  assert.deepEqual(partials.map((p) => merged.merge(p)), charged);
  assert.ok(charged[0]! > 0);
  assert.deepEqual([...byRows.rows()].flat(), [...merged.rows()].flat());
  const expected = [...whole.rows()].flat();
  assert.deepEqual([...merged.rows()].flat(), expected);
  assert.deepEqual(expected.map((r) => r.n), [3, 2, 1, 2, 1]);
  assert.deepEqual(expected.map((r) => r.b), [69, 18, 8, 288, 128]);
});
