/**
 * The committed SIMD scanner (engine/simd/scanner_wasm.ts) is exactly what its source
 * (engine/simd/scanner.wat) assembles to with the pinned npm wabt. Without npm (wabt cannot be
 * fetched) the test is ignored, and its name says why.
 */
import assert from "node:assert/strict";

let build: typeof import("../tools/build_scanner.ts") | null = null;
let why = "";
try {
  build = await import("../tools/build_scanner.ts");
} catch (e) {
  why = e instanceof Error ? e.message.split("\n")[0]! : String(e);
}

Deno.test({
  name: build !== null
    ? "rebuilding the SIMD scanner from scanner.wat gives the committed bytes"
    : `SKIPPED, npm's wabt could not be loaded (${why}): rebuilding the SIMD scanner`,
  ignore: build === null,
  fn: async () => {
    const text = build!.scannerModule(await build!.assembleScanner());
    assert.equal(text, await build!.committedModule(), "run `deno task scanner` and commit");
  },
});
