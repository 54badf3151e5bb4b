/**
 * The resource tree: virtual paths mapped under `<home>/data/`.
 *
 * Canonical paths: `/users/<name>/...` (a user's own folder), `/shared/...`, `/system/...`.
 * `/user/...` is the caller's alias for `/users/<caller>/...`. A path without a leading `/`
 * is relative to the working directory.
 *
 * Resolution is purely textual and refuses anything that could name a place outside the tree
 * (`..`, encoded traversal, backslashes, drive letters, control characters, look-alike dots);
 * `realPath` then catches symlinks that lead out of it, and symlinks inside it that lead to a
 * place whose rights would refuse the user: rights hold for where the bytes really are.
 */

import { join, relative, sep } from "node:path";
import type { User } from "./users.ts";
import { type Grant, may } from "./rights.ts";
import { TREE_ROOTS } from "./layout.ts";

export type Right = "list" | "execute" | "read" | "write" | "create";

export interface ResolvedPath {
  /** `/users/alice/x.sxt`, `/shared/logs/a.log` */
  readonly canonical: string;
  /** Absolute host path under `<home>/data/`. */
  readonly real: string;
  /** The user it was resolved for; `realPath` then checks their rights on a link's target. */
  readonly user?: User;
}

export interface ResourceTree {
  /** Host path of `<home>/data/`. */
  readonly root: string;
  /**
   * Resolves a path for `user`. Throws PathError for hostile or malformed paths (`..`,
   * encoded traversal, backslashes, NUL, empty segments, over-long names). Checks no rights.
   */
  resolve(user: User, path: string, workDir?: string): ResolvedPath;
  /** May `user` do `right` on the canonical path? (grants inherited from ancestors) */
  may(user: User, right: Right, canonical: string): boolean;
  /**
   * For an existing file or folder: the real host path after symlinks, refusing (PathError)
   * one that leads out of the tree. When `resolved` carries its user (as `resolve` returns it)
   * and a link leads elsewhere in the tree, the user must have `right` on the real target too
   * (without `right`: each of list, execute and read they have on the named path).
   */
  realPath(resolved: ResolvedPath, right?: Right): Promise<string>;
  /**
   * The canonical and host path of what an existing path really is after symlinks (its
   * `user` dropped); PathError for one that leads out of the tree. Checks no rights.
   */
  realTarget(resolved: ResolvedPath): Promise<ResolvedPath>;
}

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
/** Rights a link may not gain for its user when the caller names none (see realPath). */
const READ_SIDE: readonly Right[] = ["read", "list", "execute"];

function refuse(path: string, reason: string): never {
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
function splitPath(path: string): { absolute: boolean; segments: string[] } {
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

/** The tree on the local file system under `root` (`<home>/data`). */
export class FsResourceTree implements ResourceTree {
  #rootReal: string | undefined;

  /** `rights` supplies the grants of conf/rights.json (a RightsFile, or a fixed list in tests). */
  constructor(
    readonly root: string,
    private readonly rights: { grants(): readonly Grant[] } = { grants: () => [] },
  ) {}

  resolve(user: User, path: string, workDir?: string): ResolvedPath {
    const { absolute, segments } = splitPath(path);
    let canonical: string[];
    if (absolute) {
      canonical = this.#fromRoot(user, path, segments);
    } else {
      const base = workDir ?? `/users/${user.name}`;
      if (!base.startsWith("/")) refuse(base, "a working directory must be an absolute path");
      canonical = [...this.#fromRoot(user, base, splitPath(base).segments), ...segments];
    }
    const text = "/" + canonical.join("/");
    if (encoder.encode(text).length > MAX_PATH_BYTES) {
      refuse(text, `longer than ${MAX_PATH_BYTES} bytes`);
    }
    const real = canonical.length ? join(this.root, ...canonical) : this.root;
    return { canonical: text, real, user };
  }

  may(user: User, right: Right, canonical: string): boolean {
    return may(user, right, canonical, this.rights.grants());
  }

  async realPath(resolved: ResolvedPath, right?: Right): Promise<string> {
    const target = await this.realTarget(resolved);
    const user = resolved.user;
    if (user === undefined) return target.real;
    const rights = right ? [right] : READ_SIDE.filter((r) => this.may(user, r, resolved.canonical));
    for (const r of rights) {
      // A right the caller names must hold on both paths; by default the target must give
      // each reading right the named path gives.
      if (right && !this.may(user, r, resolved.canonical)) {
        throw new PathError(`path '${resolved.canonical}' is refused: you lack the ${r} right`);
      }
      if (!this.may(user, r, target.canonical)) {
        throw new PathError(
          `path '${resolved.canonical}' is refused: it links to a place where you lack the ${r} right`,
        );
      }
    }
    return target.real;
  }

  // Synchronous realpath: about 6 µs on a local disk, where the asynchronous op costs some
  // 40 µs of round trip through the thread pool and was 15% of the server's CPU under load
  // (bench/api_bench.ts). Not cached: a link may be changed at any time.
  // deno-lint-ignore require-await
  async realTarget(resolved: ResolvedPath): Promise<ResolvedPath> {
    this.#rootReal ??= Deno.realPathSync(this.root);
    const rootReal = this.#rootReal;
    const real = Deno.realPathSync(resolved.real);
    if (real !== rootReal && !real.startsWith(rootReal + sep)) {
      throw new PathError(`path '${resolved.canonical}' is refused: it leads out of the tree`);
    }
    const rel = relative(rootReal, real);
    return { canonical: rel === "" ? "/" : "/" + rel.split(sep).join("/"), real };
  }

  /** Canonical segments of an absolute path, with `/user` replaced by `/users/<caller>`. */
  #fromRoot(user: User, path: string, segments: string[]): string[] {
    if (segments.length === 0) return [];
    const [first, ...rest] = segments;
    if (first === "user") return ["users", user.name, ...rest];
    if ((TREE_ROOTS as readonly string[]).includes(first)) return segments;
    return refuse(
      path,
      `unknown root '/${first}'; paths start with /user, /users, /shared or /system`,
    );
  }
}
