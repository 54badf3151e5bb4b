/**
 * Patterns of `cloudapi://<store>/<log_id>/<log_name>/...` URIs: globs (`*`, `?`, `**`) and
 * time fields (`$yyyy$ $MM$ $dd$ $HH$ $mm$`) as for files. The datastore knows every file a
 * store can have, so a pattern is matched against those candidate paths.
 */

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
  let re = "";
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    const field = /^\$(yyyy|MM|dd|HH|mm)\$/.exec(p.slice(i));
    if (field) {
      re += field[1] === "yyyy" ? "\\d{4}" : "\\d{2}";
      i += field[0].length - 1;
    } else if (c === "*" && p[i + 1] === "*") {
      re += ".*";
      i++;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  const full = new RegExp(`^${re}$`);
  const below = new RegExp(`^${re}/.+$`);
  // A pattern whose last segment is plain names a folder (or file): it matches all below.
  const last = p.slice(p.lastIndexOf("/") + 1);
  const plain = !/[*?$]/.test(last);
  return (path) => full.test(path) || (plain && below.test(path));
}
