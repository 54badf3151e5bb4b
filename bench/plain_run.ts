// deno-lint-ignore-file no-console
/**
 * The hand-written baseline: what a careful programmer writes for one task with no engine at
 * all (1 MiB reads, one RegExp or JSON.parse per line, a Map). Prints `{ ms, result }`.
 *
 *   deno run --allow-read bench/plain_run.ts access|json
 */

import { ACCESS_LOG, EVENTS_JSONL } from "./gen_data.ts";

async function* lines(path: string): AsyncGenerator<string[]> {
  const file = await Deno.open(path);
  const decoder = new TextDecoder();
  const buf = new Uint8Array(1 << 20);
  let carry = "";
  try {
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      const text = carry + decoder.decode(buf.subarray(0, n), { stream: true });
      const parts = text.split("\n");
      carry = parts.pop()!;
      yield parts;
    }
    if (carry) yield [carry];
  } finally {
    file.close();
  }
}

async function access() {
  const re = /^(\S+) \S+ \S+ \[[^\]]*\] "[^"]*" (\d{3}) (\d+|-)/;
  const totals = new Map<string, number>();
  for await (const batch of lines(ACCESS_LOG)) {
    for (const line of batch) {
      const m = re.exec(line);
      if (m === null || m[2] !== "200") continue;
      const bytes = m[3] === "-" ? 0 : Number(m[3]);
      totals.set(m[1]!, (totals.get(m[1]!) ?? 0) + bytes);
    }
  }
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
}

async function json() {
  const counts = new Map<number, number>();
  for await (const batch of lines(EVENTS_JSONL)) {
    for (const line of batch) {
      if (line === "") continue;
      const status = JSON.parse(line).status;
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
  }
  return [...counts.entries()].sort((a, b) => a[0] - b[0]);
}

if (import.meta.main) {
  const task = Deno.args[0];
  const started = performance.now();
  const result = task === "access" ? await access() : await json();
  console.log(JSON.stringify({ ms: performance.now() - started, result }));
}
