/**
 * The shared state of several real `main.ts serve` processes, on each backend that can share it:
 * a Deno KV file (`kv:`) and a PostgreSQL database (`pg:`, on the test process's PostgreSQL from
 * tests/support/postgres.ts). The shared-state tests run once per backend:
 *
 *   eachBackend("servers share their users", async (backend) => {
 *     const storage = await sharedStorage(backend, root);
 *     await startServerProcess(await stateHome(root, "a", storage));
 *   });
 */

import { join } from "node:path";
import { sharedPostgres } from "./postgres.ts";

export type Backend = "kv" | "pg";
export const BACKENDS: readonly Backend[] = ["kv", "pg"];

/**
 * The `storage` setting of one fresh shared state: a KV file in `root`, or a database of its
 * own on this process's PostgreSQL.
 */
export async function sharedStorage(backend: Backend, root: string): Promise<string> {
  if (backend === "kv") return `kv:${join(root, "state.kv")}`;
  const pg = await sharedPostgres();
  return `pg:${await pg.newDatabase()}`;
}

/** A home `root/name` whose settings.conf keeps the state in `storage` (a storage setting). */
export async function stateHome(root: string, name: string, storage: string): Promise<string> {
  const dir = join(root, name);
  await Deno.mkdir(join(dir, "conf"), { recursive: true });
  await Deno.writeTextFile(join(dir, "conf", "settings.conf"), `storage = ${storage}\n`);
  return dir;
}

/**
 * Registers the test once per backend, named `<name> [kv]` and `<name> [pg]`. The file's
 * PostgreSQL is started here, at registration (the file's top level), so that no test's
 * sanitizer counts it as its own.
 */
export async function eachBackend(
  name: string,
  body: (backend: Backend) => Promise<void>,
): Promise<void> {
  await sharedPostgres();
  for (const backend of BACKENDS) Deno.test(`${name} [${backend}]`, () => body(backend));
}
