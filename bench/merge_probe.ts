// deno-lint-ignore-file no-console
/**
 * Merging workers' partial groups in the query's thread, in process: two shares of `--groups`
 * IPv4 keys (the access task's `group(client)`: 20 000 clients), each exported, cloned as a
 * worker's message is (structuredClone) and merged into one grouping, as parallel_aggregate.ts
 * does. Prints the median time of export, clone and merge for the first rows sent as columns
 * (what workers send) and, for reference, encoded one row at a time (`encodeRow`, what they sent
 * before, and still send for rows of differing fields).
 *
 *   deno run -A bench/merge_probe.ts [--groups 20000] [--runs 15]
 */
import { Grouping } from "../engine/exec/aggregate.ts";
import { foldSpec } from "../tests/support/fold_spec.ts";
import { IpAddr, type Row } from "../engine/values/values.ts";
import type { PartialGroups, RowColumns } from "../engine/contracts/scan_workers.ts";
import { encodeRow, rowOfColumns } from "../engine/table/sxt_values.ts";

function option(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
const groups = option("groups", 20_000);
const runs = option("runs", 15);
const options = {
  keys: [{ fn: (r: Row) => r.client!, label: "client", field: "client" }],
  aggregates: [foldSpec("sum", "bytes", "total")],
  outputs: ["client", "total"].map((name) => ({ name, label: name, fn: (r: Row) => r[name]! })),
};
const shares = [0, 1].map((share) => {
  const g = new Grouping(options);
  const rows: Row[] = [];
  for (let i = 0; i < groups; i++) {
    rows.push({ client: new IpAddr(4, 0x0a000000 + ((i * 7919 + share * 13) % groups)), bytes: i });
  }
  g.add(rows);
  return g;
});

/** The partial's first rows as rows (to encode them one by one, as workers did before). */
function firstRows(p: PartialGroups): Row[] {
  const cols = p.firsts as RowColumns;
  return Array.from({ length: cols.length }, (_, i) => rowOfColumns(cols, i));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const way of ["columns", "rows"] as const) {
  const times = { export: [] as number[], clone: [] as number[], merge: [] as number[] };
  for (let r = 0; r < runs; r++) {
    let partials = shares.map((g) => g.exportPartial());
    let t = performance.now();
    partials = shares.map((g) => g.exportPartial());
    if (way === "rows") {
      // The old export: each first row encoded (the rows made here from the columns, untimed).
      const rows = partials.map(firstRows);
      t = performance.now();
      partials = partials.map((p, k) => ({ ...p, firsts: rows[k]!.map(encodeRow) }));
    }
    times.export.push(performance.now() - t);
    t = performance.now();
    const cloned = partials.map((p) => structuredClone(p));
    times.clone.push(performance.now() - t);
    t = performance.now();
    const into = new Grouping(options);
    for (const p of cloned) into.merge(p);
    times.merge.push(performance.now() - t);
  }
  console.log(
    `${way.padEnd(7)} ${groups} groups x 2 shares: export ${
      median(times.export).toFixed(1)
    } ms, clone ${median(times.clone).toFixed(1)} ms, merge ${
      median(times.merge).toFixed(1)
    } ms (median of ${runs}; load ${Deno.loadavg()[0]!.toFixed(1)})`,
  );
}
