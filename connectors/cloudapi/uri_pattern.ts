/**
 * Patterns of `cloudapi://<store>/<log_id>/<log_name>/...` URIs: the globs and time fields of
 * every scheme (connectors/glob.ts). The datastore knows every file a store can have, so a
 * pattern is matched against those candidate paths.
 */

import { compileGlob, matchGlob } from "../glob.ts";

/** Splits `cloudapi://store/rest` into the store name and the path pattern after it. */
export function splitUri(uri: string): { store: string; path: string } | undefined {
  const m = /^cloudapi:\/\/([^/]+)(?:\/(.*))?$/i.exec(uri);
  if (!m) return undefined;
  return { store: m[1], path: m[2] ?? "" };
}

/** A matcher of store-relative paths; a pattern naming a folder matches all below it. */
export function pathMatcher(pattern: string): (path: string) => boolean {
  let p = pattern.replace(/^\/+/, "");
  if (p === "" || p.endsWith("/")) p += "**";
  const glob = compileGlob(p);
  // A pattern whose last segment is plain names a folder (or file): it matches all below.
  const whole = glob.segments.at(-1)?.kind === "literal" ? compileGlob(`${p}/**`) : glob;
  return (path) => matchGlob(whole, path) !== null;
}
