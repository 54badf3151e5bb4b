import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { openAtomic, writeFileAtomic } from "./atomic_write.ts";
import { isTableTempName } from "../table/temp_files.ts";

async function withFolder(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-atomic-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function names(dir: string): Promise<string[]> {
  return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
}

/**
 * Records the file-system steps `work` takes: opens, writes, syncs (by the path the file was
 * opened with) and renames, in order. The real operations still run.
 */
async function recordSteps(work: () => Promise<void>): Promise<string[]> {
  const steps: string[] = [];
  const paths = new WeakMap<Deno.FsFile, string>();
  const open = Deno.open;
  const rename = Deno.rename;
  const proto = Deno.FsFile.prototype;
  const { sync, write } = proto;
  Object.assign(Deno, {
    async open(path: string, options?: Deno.OpenOptions) {
      const file = await open(path, options);
      paths.set(file, path);
      steps.push(`open ${basename(path)}`);
      return file;
    },
    async rename(from: string, to: string) {
      await rename(from, to);
      steps.push(`rename ${basename(from)} ${basename(to)}`);
    },
  });
  proto.sync = async function (this: Deno.FsFile) {
    await sync.call(this);
    steps.push(`sync ${basename(paths.get(this) ?? "?")}`);
  };
  proto.write = async function (this: Deno.FsFile, bytes: Uint8Array) {
    const n = await write.call(this, bytes);
    if (steps.at(-1) !== `write ${basename(paths.get(this) ?? "?")}`) {
      steps.push(`write ${basename(paths.get(this) ?? "?")}`);
    }
    return n;
  };
  try {
    await work();
  } finally {
    Object.assign(Deno, { open, rename });
    Object.assign(proto, { sync, write });
  }
  return steps;
}

Deno.test("writeFileAtomic() writes, syncs the file, renames it, then syncs the folder", async () => {
  await withFolder(async (dir) => {
    const target = join(dir, "users.json");
    await Deno.writeTextFile(target, "old");
    const steps = await recordSteps(() => writeFileAtomic(target, "new content"));
    const temp = steps[0]!.slice("open ".length);
    assert.ok(isTableTempName(temp), temp); // the name the start-up sweep knows
    assert.deepEqual(steps, [
      `open ${temp}`,
      `write ${temp}`,
      `sync ${temp}`,
      `rename ${temp} users.json`,
      `open ${basename(dir)}`,
      `sync ${basename(dir)}`,
    ]);
    assert.equal(await Deno.readTextFile(target), "new content");
    assert.deepEqual(await names(dir), ["users.json"]);
  });
});

Deno.test("a failure in the middle of a write leaves the old file whole and no temporary file", async () => {
  await withFolder(async (dir) => {
    const target = join(dir, "hours.json");
    await Deno.writeTextFile(target, "the old records\n");
    const proto = Deno.FsFile.prototype;
    const write = proto.write;
    let calls = 0;
    proto.write = function (this: Deno.FsFile, bytes: Uint8Array) {
      // The first call writes half of what it was given; the next one finds the disk full.
      if (++calls === 1) return write.call(this, bytes.subarray(0, bytes.length >> 1));
      return Promise.reject(new Error("No space left on device"));
    };
    try {
      await assert.rejects(
        () => writeFileAtomic(target, "x".repeat(100_000)),
        /No space left on device/,
      );
    } finally {
      proto.write = write;
    }
    assert.ok(calls >= 2, "the write was cut in the middle");
    assert.equal(await Deno.readTextFile(target), "the old records\n");
    assert.deepEqual(await names(dir), ["hours.json"]);
  });
});

Deno.test("a failed rename leaves no temporary file and rethrows", async () => {
  await withFolder(async (dir) => {
    const target = join(dir, "taken");
    await Deno.mkdir(join(target, "inside"), { recursive: true }); // a folder cannot be replaced
    await assert.rejects(() => writeFileAtomic(target, "x"));
    assert.deepEqual(await names(dir), ["taken"]);
  });
});

Deno.test("openAtomic() shows nothing before commit, and abort keeps the old file", async () => {
  await withFolder(async (dir) => {
    const target = join(dir, "t.sxt");
    await Deno.writeTextFile(target, "old");
    const out = await openAtomic(target);
    await out.write(new TextEncoder().encode("new, streamed"));
    assert.equal(await Deno.readTextFile(target), "old");
    await out.abort();
    await out.abort(); // twice is harmless
    assert.equal(await Deno.readTextFile(target), "old");
    assert.deepEqual(await names(dir), ["t.sxt"]);
    await assert.rejects(() => out.commit(), /aborted/);

    const again = await openAtomic(target);
    await again.write(new TextEncoder().encode("XXX, streamed"));
    await again.file.seek(0, Deno.SeekMode.Start);
    await again.write(new TextEncoder().encode("new")); // a writer may patch what it wrote
    await again.commit();
    assert.equal(await Deno.readTextFile(target), "new, streamed");
    assert.deepEqual(await names(dir), ["t.sxt"]);
  });
});

Deno.test("writeFileAtomic() gives a new file the mode asked for", {
  ignore: Deno.build.os === "windows",
}, async () => {
  await withFolder(async (dir) => {
    const target = join(dir, "secret.json");
    await writeFileAtomic(target, "{}", { mode: 0o600 });
    assert.equal((await Deno.stat(target)).mode! & 0o777, 0o600);
  });
});
