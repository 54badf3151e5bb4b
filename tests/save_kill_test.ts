/**
 * A writer killed with SIGKILL in the middle of replacing a table must leave the old table
 * intact and readable, with no half-written file under the table's name.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { scalar, type Schema } from "../engine/values/types.ts";
import type { Row } from "../engine/values/values.ts";
import { readTable } from "../engine/table/table_reader.ts";
import { writeTable } from "./support/write_table.ts";
import { hostFiles } from "./support/host_files.ts";

const schema: Schema = [
  { name: "n", type: scalar("INTEGER"), nullable: false },
  { name: "text", type: scalar("STRING"), nullable: true },
];

const childScript = (tablePath: string) => `
import { writeTable } from ${
  JSON.stringify(new URL("./support/write_table.ts", import.meta.url).href)
};
const schema = ${JSON.stringify(schema)};
async function* slowRows() {
  for (let b = 0; ; b++) {
    yield Array.from({ length: 2000 }, (_, i) => ({ n: b * 2000 + i, text: "new ".repeat(20) }));
    if (b === 3) console.log("WRITING");
    await new Promise((r) => setTimeout(r, 5));
  }
}
await writeTable(${JSON.stringify(tablePath)}, schema, slowRows());
`;

async function* once(rows: Row[]): AsyncIterable<readonly Row[]> {
  yield rows;
}

Deno.test("a save killed mid-write leaves the previous table intact", async () => {
  const dir = await Deno.makeTempDir();
  const table = join(dir, "hits.sxt");
  const old = Array.from({ length: 100 }, (_, i) => ({ n: i, text: `old ${i}` }));
  await writeTable(table, schema, once(old));
  const before = await Deno.readFile(table);

  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", childScript(table)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let seen = "";
    while (!seen.includes("WRITING")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    assert.ok(seen.includes("WRITING"), "the child started writing");
    const temps = Array.from(Deno.readDirSync(dir), (e) => e.name).filter((n) => n !== "hits.sxt");
    assert.equal(temps.length, 1, "the rows go to one temporary file");
    assert.match(temps[0]!, /^\.hits\.sxt\.tmp-[0-9a-f]+$/);
    assert.ok((await Deno.stat(join(dir, temps[0]!))).size > 100_000, "the child wrote a lot");
  } finally {
    child.kill("SIGKILL"); // also when an assertion failed: never leave the writer running
    await reader.cancel();
  }
  const status = await child.status;
  assert.equal(status.signal, "SIGKILL");

  assert.deepEqual(await Deno.readFile(table), before);
  const back: Row[] = [];
  for await (const b of readTable(hostFiles, table)) back.push(...b);
  assert.deepEqual(back, old);
  const visible = Array.from(Deno.readDirSync(dir), (e) => e.name).filter((n) =>
    !n.startsWith(".")
  );
  assert.deepEqual(visible, ["hits.sxt"]);
  await Deno.remove(dir, { recursive: true });
});
