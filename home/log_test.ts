import assert from "node:assert/strict";
import { join } from "node:path";
import { batchedSink, createLogger } from "./log.ts";
import { sleep } from "../engine/util/sleep.ts";

/** A real file standing in for stderr, counting its writes. */
async function tempOut() {
  const dir = await Deno.makeTempDir({ prefix: "trawl-log-" });
  const path = join(dir, "stderr");
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  let writes = 0;
  return {
    out: {
      write: (bytes: Uint8Array) => {
        writes++;
        return file.write(bytes);
      },
      writeSync: (bytes: Uint8Array) => {
        writes++;
        return file.writeSync(bytes);
      },
    },
    writes: () => writes,
    text: () => Deno.readTextFile(path),
    async [Symbol.asyncDispose]() {
      file.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("logged lines reach the writer in order, many lines in one write", async () => {
  await using out = await tempOut();
  const log = createLogger(batchedSink(out.out));
  for (let i = 0; i < 100; i++) log.info(`request ${i}`);
  assert.equal(out.writes(), 0, "nothing is written synchronously");
  await log.flush();
  const lines = (await out.text()).trimEnd().split("\n");
  assert.equal(lines.length, 100);
  lines.forEach((line, i) => assert.match(line, new RegExp(`^\\S+Z INFO request ${i}$`)));
  assert.equal(out.writes(), 1);
});

Deno.test("lines logged while a write is in flight follow it, and flush waits for them", async () => {
  await using out = await tempOut();
  const log = createLogger(batchedSink(out.out));
  log.info("first");
  const flushed = log.flush();
  log.warn("second");
  log.error("third", new Error("boom"));
  await flushed;
  const text = await out.text();
  // The stack's lines are indented: none can pass for a line of its own.
  assert.match(text, /INFO first\n.*WARN second\n.*ERROR third\n {4}Error: boom\n {8}at /s);
});

Deno.test("lines are written without a flush once the batch delay has passed", async () => {
  await using out = await tempOut();
  const log = createLogger(batchedSink(out.out));
  log.info("alone");
  for (let i = 0; i < 100 && !(await out.text()).includes("alone"); i++) {
    await sleep(10);
  }
  assert.match(await out.text(), /INFO alone\n$/);
  await log.flush();
});
