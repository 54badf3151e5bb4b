/**
 * The hidden temporary files written before they are renamed over a table or another file
 * (`.<name>.tmp-<hex>`, see engine/fs/atomic_write.ts). A killed save leaves one behind: globs
 * never list them, `.sxt` paths never name them, and `sweepStaleTempFiles` removes old ones at
 * start.
 */

import { join } from "node:path";

const TEMP_NAME = /^\..+\.tmp-[0-9a-f]{12}$/;

/** How old a leftover must be before a sweep removes it: no save runs for so long unseen. */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/** Is `name` (a file name, not a path) the temporary file of a table being saved? */
export function isTableTempName(name: string): boolean {
  return TEMP_NAME.test(name);
}

/**
 * Removes the table temporary files under `dir` (recursively, not following symbolic links)
 * last modified more than `olderThanMs` before `now`; returns how many it removed. Folders it
 * cannot read are passed over, so a sweep never stops a start.
 *
 * @example await sweepStaleTempFiles(layout.dataDir) // in main.ts, before serving
 */
export async function sweepStaleTempFiles(
  dir: string,
  options: { olderThanMs?: number; now?: number } = {},
): Promise<number> {
  const limit = (options.now ?? Date.now()) - (options.olderThanMs ?? STALE_TEMP_MS);
  let removed = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const folder = pending.pop()!;
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(folder));
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) pending.push(path);
      else if (entry.isFile && isTableTempName(entry.name)) {
        try {
          const info = await Deno.lstat(path);
          if ((info.mtime?.getTime() ?? 0) < limit) {
            await Deno.remove(path);
            removed++;
          }
        } catch {
          // Gone already (its save finished or failed meanwhile).
        }
      }
    }
  }
  return removed;
}
