/**
 * The `storage` setting: `files` (the default: the home's folders, as always) or `kv:<path>` /
 * `kv:<url>` (Deno KV: a local SQLite file shared by the servers of one machine, or a remote KV).
 */

import type { Storage } from "../../engine/contracts/storage.ts";
import { FileStorage } from "./file_storage.ts";
import { openKvStorage } from "./kv_storage.ts";

export type StorageSetting =
  | { readonly kind: "files" }
  | { readonly kind: "kv"; readonly where: string };

export const STORAGE_FORM = "'files', 'kv:<path of a KV file>' or 'kv:<https URL of a remote KV>'";

/** The setting's text as a StorageSetting, or undefined when it is neither form. */
export function parseStorageSetting(text: string): StorageSetting | undefined {
  if (text === "files") return { kind: "files" };
  if (text.startsWith("kv:") && text.length > 3) return { kind: "kv", where: text.slice(3) };
  return undefined;
}

/** Opens the storage of a home (`homeDir` is the files backend's root). */
export function openStorage(setting: StorageSetting, homeDir: string): Promise<Storage> {
  return setting.kind === "files"
    ? Promise.resolve(new FileStorage(homeDir))
    : openKvStorage(setting.where);
}
