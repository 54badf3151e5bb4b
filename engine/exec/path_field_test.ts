import assert from "node:assert/strict";
import type { FileEntry } from "../contracts/datastore.ts";
import type { OpenSource } from "../plan/plan.ts";
import type { ExecContext } from "../plan/context.ts";
import { skipWarning } from "../plan/skip_tally.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import { filesOneAtATime, withPathField } from "./path_field.ts";

const entry = (uri: string): FileEntry => ({
  uri,
  size: 0,
  modified: 0,
  pathTime: null,
  open: () => Promise.reject(new Error("not read")),
});

async function* listOf(files: FileEntry[]): AsyncGenerator<FileEntry> {
  yield* files;
}

Deno.test("withPathField() tags each file's rows and says each warning once for the source", async () => {
  const all = [entry("/a.log"), entry("/b.log"), entry("/c.log")];
  const { files, onFile } = filesOneAtATime(() => listOf(all));
  const opened: string[][] = [];
  // An inner source that sees only its file, skips one record of each and has `x` in /b only.
  const inner: OpenSource = async function* (ctx, read) {
    assert.equal(read.fields, null, "an open source converts every field");
    assert.equal((ctx as ExecContext).direct, undefined);
    const seen: string[] = [];
    for await (const f of files(ctx)) seen.push(f.uri);
    opened.push(seen);
    ctx.warn(skipWarning({ kind: "PARSE", count: 1, first: { uri: seen[0]! } }));
    yield [{ n: 1, ...(seen[0] === "/b.log" ? { x: 5 } : {}) }, { n: 2 }];
  };
  const ctx = testContext() as unknown as ExecContext & { warnings: { message: string }[] };
  const source = withPathField(inner, () => listOf(all), onFile, "_path", {
    label: "READ_JSON",
    open: true,
  });
  const rows = [];
  for await (const b of source(ctx, { fields: ["n", "x", "y", "_path"], filter: null })) {
    rows.push(...b);
  }
  assert.deepEqual(opened, [["/a.log"], ["/b.log"], ["/c.log"]]);
  assert.deepEqual(rows.map((r) => r._path), [
    "/a.log",
    "/a.log",
    "/b.log",
    "/b.log",
    "/c.log",
    "/c.log",
  ]);
  const messages = ctx.warnings.map((w) => w.message);
  assert.equal(messages.length, 2, messages.join("\n"));
  assert.match(messages[0]!, /PARSE skipped 3 records .*the first in '\/a\.log'/);
  assert.match(messages[1]!, /READ_JSON: field 'y' was in none of the 6 records/);
});
