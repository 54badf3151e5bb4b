/**
 * A full disk for tests: a 64 KiB tmpfs mounted on a new folder. Mounting needs root (as in the
 * CI container); elsewhere `smallDisk` gives null and the test says it was skipped.
 */

/** A 64 KiB tmpfs mounted on a new folder `dir`, or null where this process may not mount. */
export async function smallDisk(
  dir: string,
): Promise<{ dir: string; [Symbol.asyncDispose](): Promise<void> } | null> {
  if (Deno.build.os !== "linux") return null;
  await Deno.mkdir(dir);
  const mount = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  if (!mount?.success) {
    await Deno.remove(dir);
    return null;
  }
  return {
    dir,
    async [Symbol.asyncDispose]() {
      await new Deno.Command("umount", { args: [dir] }).output();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
