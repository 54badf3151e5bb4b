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
import type { User } from "../engine/contracts/user.ts";
import type {
  AtomicOutput,
  Preconditions,
  ResolvedPath,
  ResourceTree,
  Right,
  TreeEntry,
  TreeFileInfo,
} from "../engine/contracts/resource_tree.ts";
import { MAX_PATH_BYTES, PathError, refuse, splitPath } from "../engine/contracts/resource_path.ts";
import { type Grant, may } from "./rights.ts";
import { TREE_ROOTS } from "./layout.ts";
import { fsTreeFiles } from "./resource_files.ts";

const encoder = new TextEncoder();
/** Rights a link may not gain for its user when the caller names none (see realPath). */
const READ_SIDE: readonly Right[] = ["read", "list", "execute"];

/** The tree on the local file system under `root` (`<home>/data`). */
export class FsResourceTree implements ResourceTree {
  #rootReal: string | undefined;

  /** `rights` supplies the grants of conf/rights.json (a RightsFile, or a fixed list in tests). */
  constructor(
    readonly root: string,
    private readonly rights: { grants(): readonly Grant[] } = { grants: () => [] },
  ) {}

  resolve(user: User, path: string, workDir?: string): ResolvedPath {
    const canonical = canonicalSegments(user, path, workDir);
    const real = canonical.length ? join(this.root, ...canonical) : this.root;
    return { canonical: "/" + canonical.join("/"), real, user };
  }

  // The file operations on host paths (home/resource_files.ts).
  readonly hostFiles = true;
  child(folder: string, name: string): string {
    return fsTreeFiles.child(folder, name);
  }
  stat(real: string, options?: { followLinks?: boolean }): Promise<TreeFileInfo | null> {
    return fsTreeFiles.stat(real, options);
  }
  list(real: string): Promise<TreeEntry[]> {
    return fsTreeFiles.list(real);
  }
  read(real: string): Promise<{ bytes: Uint8Array; etag: string }> {
    return fsTreeFiles.read(real);
  }
  open(real: string, signal: AbortSignal, from?: number): Promise<ReadableStream<Uint8Array>> {
    return fsTreeFiles.open(real, signal, from);
  }
  write(real: string, bytes: Uint8Array, preconditions?: Preconditions) {
    return fsTreeFiles.write(real, bytes, preconditions);
  }
  openAtomic(real: string): Promise<AtomicOutput> {
    return fsTreeFiles.openAtomic(real);
  }
  mkdir(real: string): Promise<void> {
    return fsTreeFiles.mkdir(real);
  }
  remove(real: string, options: { recursive: boolean; preconditions?: Preconditions }) {
    return fsTreeFiles.remove(real, options);
  }
  move(from: string, to: string): Promise<void> {
    return fsTreeFiles.move(from, to);
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
}

/**
 * The canonical segments of `path` for `user` (`/user` is `/users/<user>`, a relative path is
 * under `workDir`): textual, refusing (PathError) anything that could leave the tree. Both trees
 * resolve through here, so they refuse the same paths.
 */
export function canonicalSegments(user: User, path: string, workDir?: string): string[] {
  const { absolute, segments } = splitPath(path);
  let canonical: string[];
  if (absolute) {
    canonical = fromRoot(user, path, segments);
  } else {
    const base = workDir ?? `/users/${user.name}`;
    if (!base.startsWith("/")) refuse(base, "a working directory must be an absolute path");
    canonical = [...fromRoot(user, base, splitPath(base).segments), ...segments];
  }
  const text = "/" + canonical.join("/");
  if (encoder.encode(text).length > MAX_PATH_BYTES) {
    refuse(text, `longer than ${MAX_PATH_BYTES} bytes`);
  }
  return canonical;
}

/** Canonical segments of an absolute path, with `/user` replaced by `/users/<caller>`. */
function fromRoot(user: User, path: string, segments: string[]): string[] {
  if (segments.length === 0) return [];
  const [first, ...rest] = segments;
  if (first === "user") return ["users", user.name, ...rest];
  if ((TREE_ROOTS as readonly string[]).includes(first!)) return segments;
  return refuse(
    path,
    `unknown root '/${first}'; paths start with /user, /users, /shared or /system`,
  );
}
