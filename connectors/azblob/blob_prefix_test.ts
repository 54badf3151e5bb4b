import assert from "node:assert/strict";
import { compileGlob } from "../glob.ts";
import { blobPrefix } from "./blob_prefix.ts";

Deno.test("blobPrefix() stops at the first glob or time field, inside a segment too", () => {
  assert.equal(blobPrefix(compileGlob("logs/app-*.json")), "logs/app-");
  assert.equal(blobPrefix(compileGlob("a/b/y=$yyyy$/m=$MM$/x.json")), "a/b/y=");
  assert.equal(blobPrefix(compileGlob("a/**/y=$yyyy$/PT1H.json")), "a/");
  assert.equal(blobPrefix(compileGlob("a/b?.log")), "a/b");
  assert.equal(blobPrefix(compileGlob("**/x.json")), "");
});

Deno.test("blobPrefix() of a pattern without globs is the whole name", () => {
  assert.equal(blobPrefix(compileGlob("a/b/c.json")), "a/b/c.json");
});
