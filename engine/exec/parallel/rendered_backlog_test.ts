import assert from "node:assert/strict";
import { RenderedBacklog } from "./rendered_backlog.ts";
import { RenderedRows } from "../../render/rendered.ts";

const encoder = new TextEncoder();

function part(i: number): RenderedRows {
  // Rows of several lengths, non-ASCII among them.
  const rows = Array.from(
    { length: 1 + (i % 7) },
    (_, r) => `{"i":${i},"r":${r},"s":"zürich ${"x".repeat(i * r % 50)}"}`,
  );
  const ends = new Uint32Array(rows.length);
  let text = "";
  rows.forEach((row, r) => {
    text += row;
    ends[r] = encoder.encode(text).length;
  });
  return new RenderedRows(encoder.encode(text), ends);
}

Deno.test("a backlog gives its batches back in order, byte for byte, and leaves no file", async () => {
  const dir = await Deno.makeTempDir();
  const backlog = new RenderedBacklog(`${dir}/results`);
  try {
    assert.equal(backlog.size, 0);
    assert.equal(await backlog.shift(), undefined);
    const expected: RenderedRows[] = [];
    let next = 0;
    const check = async () => {
      const got = (await backlog.shift())!;
      const want = expected.shift()!;
      assert.deepEqual(got.bytes, want.bytes);
      assert.deepEqual(got.ends, want.ends);
    };
    // Pushes and shifts interleaved, the backlog emptied (and its file reused) twice.
    for (const [pushes, shifts] of [[5, 2], [3, 6], [10, 4], [1, 7]] as const) {
      for (let i = 0; i < pushes; i++) {
        const p = part(next++);
        expected.push(new RenderedRows(p.bytes.slice(), p.ends.slice()));
        await backlog.push(p);
        // Written out, its buffer let go of at once.
        assert.equal(p.bytes.length, 0);
      }
      for (let i = 0; i < shifts; i++) await check();
      assert.equal(backlog.size, expected.length);
    }
    assert.equal(backlog.size, 0);
    assert.equal(backlog.bytes, 0);
    assert.ok(backlog.peakBytes > 0);
    // The file was removed as soon as it was opened: nothing to see, nothing to leave.
    assert.deepEqual(await Array.fromAsync(Deno.readDir(`${dir}/results`)), []);
  } finally {
    backlog.close();
    await Deno.remove(dir, { recursive: true });
  }
});
