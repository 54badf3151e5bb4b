// deno-lint-ignore-file no-console
/**
 * The SIMD scanner (engine/simd/) against the JavaScript paths it can replace, in one thread, on
 * the engine bench's data (by hand, never in CI; `deno run -A bench/gen_data.ts` first):
 *
 * 1. READ_JSON's path reader over the sign-ins (status.errorCode, location.countryOrRegion):
 *    the JavaScript reader (json_line_reader.ts) and the indexed one (json_index_reader.ts);
 * 2. the scanner's kernels alone: the copy into its memory, stage 1 (indexJson's tokens),
 *    stage 2 (the grammar of each line) as part of indexJson, and the line-end search against
 *    `Uint8Array.prototype.indexOf`.
 *
 *   deno run -A bench/scanner_bench.ts [--mb 64] [--rounds 5]
 *
 * Times are CPU time of the process (user + system): on a loaded machine the wall time says
 * more about the other processes. Pieces of 96 KiB, as scan_lines.ts hands them out.
 */

import process from "node:process";
import { SIGNINS_JSONL } from "./gen_data.ts";
import { type JsonPathReader, jsonPathReader } from "../engine/exec/json_line_reader.ts";
import { indexedPathReader } from "../engine/exec/json_index_reader.ts";
import { SimdScanner } from "../engine/simd/scanner.ts";
import { DECODE_BYTES } from "../engine/exec/scan_lines.ts";

function option(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

const mb = option("mb", 64);
const rounds = option("rounds", 5);
const file = await Deno.open(SIGNINS_JSONL);
const buffer = new Uint8Array(mb << 20);
let filled = 0;
while (filled < buffer.length) {
  const n = await file.read(buffer.subarray(filled));
  if (n === null) break;
  filled += n;
}
file.close();
const data = buffer.subarray(0, buffer.lastIndexOf(0x0a, filled - 1) + 1);
const pieces: [number, number][] = [];
for (let start = 0; start < data.length;) {
  const stop = data.indexOf(0x0a, Math.min(data.length, start + DECODE_BYTES) - 1) + 1 ||
    data.length;
  pieces.push([start, stop]);
  start = stop;
}

function cpu<T>(f: () => T): [number, T] {
  const before = process.cpuUsage();
  const out = f();
  const used = process.cpuUsage(before);
  return [(used.user + used.system) / 1000, out];
}

function readAll(reader: JsonPathReader): number {
  let failures = 0;
  for (const [start, stop] of pieces) {
    reader.prepare(data, start, stop);
    let i = start;
    while (i < stop) {
      const v = reader.read(data, i);
      if (v === undefined) {
        i = data.indexOf(0x0a, i) + 1;
        continue;
      }
      if (v[0] !== 0) failures++;
      i = reader.next;
    }
  }
  return failures;
}

const paths = [["status", "errorCode"], ["location", "countryOrRegion"]];
const scanner = new SimdScanner();
const rate = (ms: number) => `${(data.length / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;
console.log(`${(data.length / 1e6).toFixed(1)} MB of sign-ins, ${pieces.length} pieces`);
console.log(`load average: ${Deno.readTextFileSync("/proc/loadavg").trim()}`);
console.log(
  "| round | JS reader ms | indexed ms | index only ms | of it stage 2 | \\n JS | \\n SIMD |",
);
console.log(
  "|-------|--------------|------------|---------------|---------------|-------|---------|",
);
for (let round = 1; round <= rounds; round++) {
  const [js, a] = cpu(() => readAll(jsonPathReader(paths)!));
  const [wasm, b] = cpu(() => readAll(indexedPathReader(paths)!));
  if (a !== b) throw new Error(`the readers disagree: ${a} and ${b} failures`);
  const [index] = cpu(() => {
    for (const [start, stop] of pieces) scanner.indexJson(data, start, stop);
  });
  const [stage1] = cpu(() => {
    for (const [start, stop] of pieces) scanner.indexJson(data, start, stop, false);
  });
  const [nlJs] = cpu(() => {
    let n = 0;
    for (let i = data.indexOf(0x0a); i >= 0; i = data.indexOf(0x0a, i + 1)) n++;
    return n;
  });
  const [nlSimd] = cpu(() => {
    for (const [start, stop] of pieces) scanner.findByte(data, start, stop, 0x0a);
  });
  console.log(
    `| ${round} | ${js.toFixed(0)} (${rate(js)}) | ${wasm.toFixed(0)} (${rate(wasm)}) | ${
      index.toFixed(0)
    } | ${(index - stage1).toFixed(0)} | ${nlJs.toFixed(0)} | ${nlSimd.toFixed(0)} |`,
  );
}
console.log(`load average: ${Deno.readTextFileSync("/proc/loadavg").trim()}`);
