/**
 * The text of a virtual path, checked before it is used anywhere: no `..`, no encoded
 * traversal, backslashes, drive letters, control or invisible characters, look-alike dots or
 * slashes, over-long names. Every implementation of a tree, and every datastore that maps paths
 * onto a host folder, splits paths here.
 */

/** A path refused by resolution; `message` names the path and the reason. */
export class PathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PathError";
  }
}

export const MAX_PATH_BYTES = 4096;
export const MAX_SEGMENT_BYTES = 255;

const encoder = new TextEncoder();
// C0 controls, DEL and C1 controls.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const HAS_ESCAPE = /%[0-9A-Fa-f]{2}/;
// Invisible format characters (zero-width, bidi overrides, BOM): names that look like others.
const FORMAT = /\p{Cf}/u;

export function refuse(path: string, reason: string): never {
  throw new PathError(`path '${JSON.stringify(path).slice(1, -1)}' is refused: ${reason}`);
}

/**
 * Decodes `%XX` escapes as UTF-8, repeatedly (double encoding), only to inspect what they
 * stand for; returns undefined for escapes that are not valid UTF-8 (e.g. overlong `%c0%ae`).
 */
function decodeEscapes(segment: string): string | undefined {
  let text = segment;
  for (let i = 0; i < 4 && HAS_ESCAPE.test(text); i++) {
    try {
      text = decodeURIComponent(text.replace(/%(?![0-9A-Fa-f]{2})/g, "%25"));
    } catch {
      return undefined;
    }
  }
  return text;
}

function checkSegment(path: string, segment: string): void {
  if (segment === "") refuse(path, "empty path segment");
  if (segment === "." || segment === "..") refuse(path, `'${segment}' segments are not allowed`);
  if (segment.startsWith("~")) refuse(path, "'~' is not allowed at the start of a name");
  if (encoder.encode(segment).length > MAX_SEGMENT_BYTES) {
    refuse(path, `a name is longer than ${MAX_SEGMENT_BYTES} bytes`);
  }
  const decoded = decodeEscapes(segment);
  if (decoded === undefined) refuse(path, "percent escapes that are not valid UTF-8");
  if (
    decoded !== segment &&
    (decoded === "." || decoded === ".." || /[/\\]/.test(decoded) || CONTROL.test(decoded))
  ) {
    refuse(path, "percent escapes that decode to '/', '\\', '.', '..' or control characters");
  }
  if (FORMAT.test(decoded)) refuse(path, "invisible formatting characters in a name");
  // Compatibility forms fold `．．` (U+FF0E), `‥` (U+2025) and `／` into `..` and `/`; a layer
  // that normalises names (or a file system that drops trailing dots and spaces) would see them.
  const folded = decoded.normalize("NFKC");
  if (folded !== decoded) {
    if (/^\.+$/.test(folded) || /[/\\]/.test(folded) || CONTROL.test(folded)) {
      refuse(path, "characters that stand for '.', '..', '/' or '\\' (look-alike dots or slashes)");
    }
  }
  if (/[. ]$/.test(folded)) refuse(path, "a name may not end with a dot or a space");
}

/** Splits a path's text into checked segments; `absolute` tells whether it began with `/`. */
export function splitPath(path: string): { absolute: boolean; segments: string[] } {
  if (path === "") refuse(path, "empty path");
  if (encoder.encode(path).length > MAX_PATH_BYTES) {
    refuse(path, `longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (CONTROL.test(path)) refuse(path, "control characters (or NUL) in the path");
  if (path.includes("\\")) refuse(path, "backslashes are not allowed");
  if (/^[A-Za-z]:/.test(path)) refuse(path, "drive letters are not allowed");
  const absolute = path.startsWith("/");
  let rest = absolute ? path.slice(1) : path;
  // One trailing slash may mark a folder; a lone "/" is the root.
  if (rest.endsWith("/")) rest = rest.slice(0, -1);
  if (rest === "") {
    if (!absolute || path.length > 1) refuse(path, "empty path segment");
    return { absolute, segments: [] };
  }
  const segments = rest.split("/");
  for (const segment of segments) checkSegment(path, segment);
  return { absolute, segments };
}

/**
 * Checks the text of an absolute path as `resolve` does (no `..`, encoded traversal, control
 * characters, look-alike dots), for paths under other roots such as `file://<store>/...`;
 * returns its segments. Throws PathError.
 */
export function checkAbsolutePath(path: string): readonly string[] {
  const { absolute, segments } = splitPath(path);
  if (!absolute) refuse(path, "expected a path that starts with '/'");
  return segments;
}

/** Is `path` the canonical path `ancestor` or below it? */
export function isWithin(path: string, ancestor: string): boolean {
  if (ancestor === "/") return path.startsWith("/");
  return path === ancestor || path.startsWith(ancestor + "/");
}
