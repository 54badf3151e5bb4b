/** Writing a file so that readers see either the old or the new content, never a mix. */

import { basename, dirname, join } from "node:path";

/**
 * Writes `content` to a temporary file beside `file`, then renames it over `file` (a rename within
 * one folder is atomic on POSIX file systems).
 */
export async function writeFileAtomic(
  file: string,
  content: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const random = crypto.getRandomValues(new Uint32Array(2)).join("");
  const temp = join(dirname(file), `.${basename(file)}.${random}.tmp`);
  try {
    const write = { mode: options.mode, createNew: true };
    if (typeof content === "string") await Deno.writeTextFile(temp, content, write);
    else await Deno.writeFile(temp, content, write);
    await Deno.rename(temp, file);
  } catch (e) {
    await Deno.remove(temp).catch(() => {});
    throw e;
  }
}
