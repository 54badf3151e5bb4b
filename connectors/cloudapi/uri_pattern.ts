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
  return { store: m[1]!, path: m[2] ?? "" };
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

/**
 * Whether `pattern` (store-relative) can name files of the log `<logId>/<uriName>/...`: its first
 * two segments match them, unless a `**` comes before. A pattern no log of a store passes names
 * nothing whatever the hours (a misspelt log name), which the store says in a warning.
 */
export function mayNameLog(pattern: string, logId: string, uriName: string): boolean {
  const parts = pattern.split("/").filter((p) => p !== "");
  const names = [logId, uriName];
  for (let i = 0; i < Math.min(2, parts.length); i++) {
    if (parts[i] === "**") return true;
    if (matchGlob(compileGlob(parts[i]!), names[i]!) === null) return false;
  }
  return true;
}
