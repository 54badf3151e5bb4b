import assert from "node:assert/strict";
import { storageError } from "./storage_error.ts";
import { QueryError } from "../front/diagnostics.ts";

/** The error a real file-system call throws. */
async function thrown(f: () => Promise<unknown>): Promise<unknown> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error("it did not throw");
}

Deno.test("a full device and a refused name become query errors saying so", async () => {
  const full = await thrown(async () => {
    using file = await Deno.open("/dev/full", { write: true });
    await file.write(new Uint8Array(16));
  });
  const mapped = storageError(full, "saving the table '/user/t.sxt'");
  assert.ok(mapped instanceof QueryError);
  assert.equal(mapped.diagnostic.code, "RUNTIME_ERROR");
  assert.match(
    mapped.message,
    /no space left on the device while saving the table '\/user\/t\.sxt'/,
  );

  const dir = await Deno.makeTempDir();
  try {
    const long = await thrown(() => Deno.writeTextFile(`${dir}/${"x".repeat(300)}`, ""));
    const named = storageError(long, "saving the table '/user/t.sxt'");
    assert.ok(named instanceof QueryError);
    assert.match(named.message, /refuses the name as too long/);
    assert.doesNotMatch(named.message, new RegExp(dir)); // no server path in the answer
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("other errors pass through unchanged", () => {
  const bug = new TypeError("x is undefined");
  assert.equal(storageError(bug, "saving"), bug);
  const gone = Object.assign(new Error("No such file"), { code: "ENOENT" });
  assert.equal(storageError(gone, "saving"), gone);
});
