/**
 * Open file descriptors of this process (Linux), for tests that check a query closes its files.
 * Test modules run in parallel in one process, so a test must count only the files it owns:
 * pass the folder (or file) its data lives in.
 */

/** Host paths of this process's open file descriptors that start with `prefix`. */
export function openFilesUnder(prefix: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      const target = Deno.readLinkSync(`/proc/self/fd/${e.name}`);
      if (target.startsWith(prefix)) out.push(target);
    } catch { /* closed meanwhile */ }
  }
  return out;
}
