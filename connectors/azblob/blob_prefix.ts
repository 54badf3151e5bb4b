/**
 * The longest literal prefix of a blob pattern: the text before its first `*`, `?` or time
 * field. Blob names are flat, so one listing by this prefix finds every candidate, and a
 * pattern like `logs/app-*.json` lists only `logs/app-...`, not all of `logs/`.
 */

import type { Glob } from "../glob.ts";

const FIRST_GLOB = /\*|\?|\$(?:yyyy|MM|dd|HH|mm)\$/;

/** @example blobPrefix(compileGlob("a/y=$yyyy$/m=$MM$/*.json")) // "a/y=" */
export function blobPrefix(glob: Glob): string {
  const path = glob.pattern.replace(/^\/+/, "");
  const at = path.search(FIRST_GLOB);
  return at < 0 ? path : path.slice(0, at);
}
