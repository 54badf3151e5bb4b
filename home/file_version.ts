/**
 * A cheap identity of a file's content for caches that must see changes made by other
 * processes: inode (an atomic rename makes a new one), size, mtime and ctime.
 */

/** `"missing"` for a file that does not exist. */
export type FileVersion = string;

export function versionOf(info: Deno.FileInfo): FileVersion {
  return `${info.ino}:${info.size}:${info.mtime?.getTime()}:${info.ctime?.getTime()}`;
}

export async function fileVersion(file: string): Promise<FileVersion> {
  try {
    return versionOf(await Deno.stat(file));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "missing";
    throw e;
  }
}

export function fileVersionSync(file: string): FileVersion {
  try {
    return versionOf(Deno.statSync(file));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return "missing";
    throw e;
  }
}
