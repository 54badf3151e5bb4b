/**
 * Where everything of a Trawl home lives. One place names the folders, so no other module
 * joins path strings under the home by hand.
 *
 *   <home>/conf/settings.conf   key = value settings
 *   <home>/conf/users.json      users, tokens only as SHA-256 hashes
 *   <home>/conf/rights.json     grants of rights on paths of the resource tree
 *   <home>/conf/license         the edition
 *   <home>/data/                the resource tree: users/<name>/, shared/, system/
 *   <home>/engine_data/cloud_api/   fetched cloud audit logs
 *   <home>/engine_data/results/     query results spilled to disk
 *   <home>/engine_data/cache/       the column cache: what queries extracted, by file
 */

import { join, resolve } from "node:path";

export interface HomeLayout {
  /** Absolute path of the home folder. */
  readonly dir: string;
  readonly confDir: string;
  /** Root of the resource tree. */
  readonly dataDir: string;
  readonly engineDataDir: string;
  readonly cloudApiDir: string;
  readonly resultsDir: string;
  /** The column cache (engine/fs/column_cache.ts). */
  readonly cacheDir: string;
  readonly settingsFile: string;
  readonly usersFile: string;
  readonly rightsFile: string;
  readonly licenseFile: string;
}

/** The top-level folders of the resource tree under `data/`. */
export const TREE_ROOTS = ["users", "shared", "system"] as const;

/** The paths of a home folder; touches nothing on disk. */
export function homeLayout(dir: string): HomeLayout {
  const home = resolve(dir);
  const confDir = join(home, "conf");
  const engineDataDir = join(home, "engine_data");
  return {
    dir: home,
    confDir,
    dataDir: join(home, "data"),
    engineDataDir,
    cloudApiDir: join(engineDataDir, "cloud_api"),
    resultsDir: join(engineDataDir, "results"),
    cacheDir: join(engineDataDir, "cache"),
    settingsFile: join(confDir, "settings.conf"),
    usersFile: join(confDir, "users.json"),
    rightsFile: join(confDir, "rights.json"),
    licenseFile: join(confDir, "license"),
  };
}

/** Creates the folders of a home (an existing home is left as it is) and returns its layout. */
export async function ensureHome(dir: string): Promise<HomeLayout> {
  const layout = homeLayout(dir);
  const folders = [
    layout.confDir,
    ...TREE_ROOTS.map((root) => join(layout.dataDir, root)),
    layout.cloudApiDir,
    layout.resultsDir,
  ];
  for (const folder of folders) await Deno.mkdir(folder, { recursive: true });
  return layout;
}

/** Reads a text file, or returns null when it does not exist. */
export async function readTextIfExists(file: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}
