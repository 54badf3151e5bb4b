/**
 * Serialising result rows: `deno bench bench/render_bench.ts`. The target is 200 000 JSON rows
 * of five columns well within a second (about 0.9 M rows/s on a laptop core). The output itself
 * is tested in engine/render/render_test.ts; speed is measured here only, never timed in tests.
 */

import {
  ByteSink,
  compileRowBytesWriter,
  compileRowTextWriter,
} from "../engine/render/render_bytes.ts";
import { parseIp } from "../engine/values/ip.ts";
import { type Row, Timestamp } from "../engine/values/values.ts";

const COLUMNS = ["time", "client", "status", "path", "bytes"];
const MS = Date.UTC(2024, 4, 1, 13);

const rows: Row[] = Array.from({ length: 1000 }, (_, i) => ({
  time: new Timestamp(MS + i * 1000),
  client: parseIp(`10.0.${i % 256}.${i % 200}`),
  status: 200 + (i % 5),
  path: `/index/${i}.html`,
  bytes: i * 17,
}));

function serialise(write: (row: Row) => string): number {
  let length = 0;
  for (let k = 0; k < 200; k++) for (const r of rows) length += write(r).length;
  if (length === 0) throw new Error("no output");
  return length;
}

Deno.bench("compileRowTextWriter() json: 200 000 rows", { group: "render", baseline: true }, () => {
  serialise(compileRowTextWriter("json", COLUMNS, { timeZone: "UTC" }));
});

Deno.bench("compileRowTextWriter() csv: 200 000 rows", { group: "render" }, () => {
  serialise(compileRowTextWriter("csv", COLUMNS, { timeZone: "UTC" }));
});

Deno.bench("compileRowBytesWriter() json: 200 000 rows into bytes", { group: "render" }, () => {
  const write = compileRowBytesWriter("json", COLUMNS, { timeZone: "UTC" });
  const sink = new ByteSink(1 << 20);
  const ends: number[] = [];
  let length = 0;
  for (let k = 0; k < 200; k++) {
    sink.at = 0;
    ends.length = 0;
    write(rows, sink, ends);
    length += sink.at;
  }
  if (length === 0) throw new Error("no output");
});

Deno.bench(
  "compileRowTextWriter() json + UTF-8: 200 000 rows into bytes",
  { group: "render" },
  () => {
    const write = compileRowTextWriter("json", COLUMNS, { timeZone: "UTC" });
    const encoder = new TextEncoder();
    const out = new Uint8Array(1 << 22);
    let length = 0;
    for (let k = 0; k < 200; k++) {
      let text = "";
      for (const r of rows) text += write(r);
      length += encoder.encodeInto(text, out).written;
    }
    if (length === 0) throw new Error("no output");
  },
);
