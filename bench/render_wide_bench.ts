/**
 * The wide task's rendering alone (bench/engine_bench.ts `wide`): rows shaped like the access
 * log's five columns (a timestamp that changes second every 100 rows, as in the bench log, an
 * IPv4 address, a status, a byte count, a path), rendered into JSON bytes with the body's frame,
 * as a scan worker does: from rows, and from the same values as columns (a cached block's
 * vectors, compileColumnBytesWriter). `deno bench bench/render_wide_bench.ts`; never timed in
 * tests.
 */

import {
  ByteSink,
  type ColumnVectors,
  compileColumnBytesWriter,
  compileRowBytesWriter,
} from "../engine/render/render_bytes.ts";
import { parseIp } from "../engine/values/ip.ts";
import { type Row, Timestamp } from "../engine/values/values.ts";

const COLUMNS = ["time", "ip", "status", "bytes", "path"];
const MS = Date.UTC(2024, 4, 1, 13);

const rows: Row[] = Array.from({ length: 4096 }, (_, i) => ({
  time: new Timestamp(MS + Math.floor(i / 100) * 1000 + (i % 100) * 9),
  ip: parseIp(`10.${i % 7}.${i % 256}.${i % 200}`),
  status: i % 11 === 0 ? 404 : 200,
  bytes: i % 13 === 0 ? null : i * 17,
  path: `/shop/item/${i}?ref=home`,
}));

Deno.bench("wide rows: 409 600 rows into JSON bytes, framed", () => {
  const write = compileRowBytesWriter("json", COLUMNS, { timeZone: "UTC" }, {
    lead: ",",
    nulls: COLUMNS.map(() => false),
  });
  const sink = new ByteSink(1 << 20);
  const ends: number[] = [];
  let length = 0;
  for (let k = 0; k < 100; k++) {
    sink.at = 0;
    ends.length = 0;
    write(rows, sink, ends);
    length += sink.at;
  }
  if (length === 0) throw new Error("no output");
});

/** The same rows as a block's columns: the path a text column of one string and offsets. */
function columnsOf(): ColumnVectors[] {
  const n = rows.length;
  const paths = rows.map((r) => r.path as string);
  const offsets = new Uint32Array(n + 1);
  paths.forEach((p, i) => offsets[i + 1] = offsets[i]! + p.length);
  const tags = Uint8Array.from(rows, (r) => r.bytes === null ? 1 : 0);
  return [
    { kind: "ts", vec: Float64Array.from(rows, (r) => (r.time as Timestamp).ms), tags: null },
    {
      kind: "ip4",
      vec: Uint32Array.from(rows, (r) => (r.ip as { bits: number }).bits),
      tags: null,
    },
    { kind: "num", vec: Int32Array.from(rows, (r) => r.status as number), tags: null },
    { kind: "num", vec: Int32Array.from(rows, (r) => (r.bytes as number | null) ?? 0), tags },
    { kind: "str", text: paths.join(""), offsets, tags: null },
  ];
}

Deno.bench("wide columns: the same 409 600 rows from vectors into JSON bytes, framed", () => {
  const sink = new ByteSink(1 << 20);
  const ends: number[] = [];
  const nulls = COLUMNS.map(() => false);
  const writer = compileColumnBytesWriter("json", COLUMNS, { timeZone: "UTC" }, sink, ends, nulls, {
    lead: ",",
  });
  const write = writer.block(columnsOf());
  let length = 0;
  for (let k = 0; k < 100; k++) {
    sink.at = 0;
    ends.length = 0;
    write(null, 0, rows.length);
    length += sink.at;
  }
  if (length === 0) throw new Error("no output");
});
