/**
 * Walks folders along a compiled glob, listing only the folders the pattern can reach and
 * skipping whole folders whose time fields lie outside `from`/`to` (a query from May never
 * descends into `2024/04`). The file system is abstract: the resource tree and FILE
 * datastores supply their own, with their own rights and warnings.
 */

import { type Glob, type GlobSegment, matchSegment, type TimeCaptures } from "../glob.ts";
import { spanOverlaps, timeSpan } from "./path_time.ts";
import { checkCancelled } from "../../engine/plan/context.ts";

export interface WalkEntry {
  readonly name: string;
  readonly kind: "file" | "dir";
}

export interface WalkFs {
  /** The entries of a folder, or null when it cannot be listed (the fs has said why). */
  list(path: string): Promise<readonly WalkEntry[] | null>;
  /** What `path` is, or null when it does not exist or may not be seen. */
  probe(path: string): Promise<WalkEntry["kind"] | null>;
}

export interface WalkOptions {
  readonly timeZone: string;
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly signal: AbortSignal;
}

export interface GlobMatch {
  /** `base` joined with the matched names. */
  readonly path: string;
  readonly pathTime: number | null;
}

interface State {
  readonly index: number;
  readonly captures: TimeCaptures;
}

/** Symlinked folders can form loops under `**`; no real layout is deeper than this. */
const MAX_DEPTH = 64;

/** The files under `glob.base` that match the glob's segments, in name order per folder. */
export async function* walkGlob(
  glob: Glob,
  fs: WalkFs,
  options: WalkOptions,
): AsyncGenerator<GlobMatch> {
  if (glob.segments.length === 0) return;
  yield* walkFolder(glob.base, closure(glob.segments, [{ index: 0, captures: {} }]), 0);

  async function* walkFolder(
    path: string,
    states: readonly State[],
    depth: number,
  ): AsyncGenerator<GlobMatch> {
    checkCancelled(options.signal);
    const segs = glob.segments;
    const last = segs.length - 1;
    const entries = await entriesOf(path, states!.map((s) => segs[s.index]!));
    if (!entries) return;
    for (const entry of entries) {
      const next: State[] = [];
      let fileMatch: TimeCaptures | null = null;
      for (const s of states) {
        const seg = segs[s.index]!;
        if (seg.kind === "any") {
          if (entry.kind === "dir") next.push(s);
          else if (s.index === last) fileMatch ??= s.captures;
          continue;
        }
        const captures = matchSegment(seg, entry.name, s.captures);
        if (!captures) continue;
        if (s.index === last) {
          if (entry.kind === "file") fileMatch ??= captures;
        } else if (entry.kind === "dir") next.push({ index: s.index + 1, captures });
      }
      const child = join(path, entry.name);
      if (fileMatch) {
        const span = timeSpan(fileMatch, options.timeZone);
        if (spanOverlaps(span, options.from, options.to)) {
          yield { path: child, pathTime: span ? span.start : null };
        }
      }
      if (next.length > 0 && depth < MAX_DEPTH) {
        const states = closure(segs, next).filter((s) =>
          spanOverlaps(timeSpan(s.captures, options.timeZone), options.from, options.to)
        );
        if (states.length > 0) yield* walkFolder(child, states, depth + 1);
      }
    }
  }

  /** Literal segments are probed by name; only a glob lists the folder. */
  async function entriesOf(
    path: string,
    segments: readonly GlobSegment[],
  ): Promise<readonly WalkEntry[] | null> {
    if (segments.every((s) => s.kind === "literal")) {
      const names = [...new Set(segments.map((s) => (s as { text: string }).text))];
      const out: WalkEntry[] = [];
      for (const name of names) {
        const kind = await fs.probe(join(path, name));
        if (kind) out.push({ name, kind });
      }
      return out;
    }
    const listed = await fs.list(path);
    return listed
      ? [...listed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      : null;
  }
}

/** Adds the states where a `**` matches no segment at all; one state per segment index. */
function closure(segs: readonly GlobSegment[], states: readonly State[]): State[] {
  const out: State[] = [];
  const seen = new Set<number>();
  const queue = [...states];
  while (queue.length > 0) {
    const s = queue.shift()!;
    if (seen.has(s.index)) continue;
    seen.add(s.index);
    out.push(s);
    if (segs[s.index]!.kind === "any" && s.index < segs.length - 1) {
      queue.push({ index: s.index + 1, captures: s.captures });
    }
  }
  return out;
}

function join(path: string, name: string): string {
  if (path === "") return name;
  return path.endsWith("/") ? path + name : `${path}/${name}`;
}
