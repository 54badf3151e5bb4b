/**
 * The `storage` setting: `files` (the default: the home's folders, as always), `kv:<path>` /
 * `kv:<url>` (Deno KV: a local SQLite file shared by the servers of one machine, or a remote KV)
 * or `pg:<postgres URL>` (PostgreSQL: shared by servers on any number of machines).
 */

import type { Storage } from "../../engine/contracts/storage.ts";
import { FileStorage } from "./file_storage.ts";
import { openKvStorage } from "./kv_storage.ts";
import { openPgStorage } from "./pg_storage.ts";

export type StorageSetting =
  | { readonly kind: "files" }
  | { readonly kind: "kv"; readonly where: string }
  | { readonly kind: "pg"; readonly url: string };

export const STORAGE_FORM =
  "'files', 'kv:<path of a KV file>', 'kv:<https URL of a remote KV>' or 'pg:postgres://<user>@<host>/<database>'";

/** The setting's text as a StorageSetting, or undefined when it is neither form. */
export function parseStorageSetting(text: string): StorageSetting | undefined {
  if (text === "files") return { kind: "files" };
  if (text.startsWith("kv:") && text.length > 3) return { kind: "kv", where: text.slice(3) };
  if (/^pg:postgres(ql)?:\/\/./i.test(text)) return { kind: "pg", url: text.slice(3) };
  return undefined;
}

/** Opens the storage of a home (`homeDir` is the files backend's root). */
export function openStorage(setting: StorageSetting, homeDir: string): Promise<Storage> {
  return setting.kind === "files"
    ? Promise.resolve(new FileStorage(homeDir))
    : setting.kind === "kv"
    ? openKvStorage(setting.where)
    : openPgStorage(setting.url);
}
