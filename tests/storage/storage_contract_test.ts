/** Both backends of engine/contracts/storage.ts pass the same contract (tests/storage/storage_contract.ts). */

import { runStorageContract } from "./storage_contract.ts";
import { FileStorage } from "../../home/storage/file_storage.ts";
import { KvStorage } from "../../home/storage/kv_storage.ts";

runStorageContract("files", {
  newStorage: async () => new FileStorage(await Deno.makeTempDir({ prefix: "trawl-files-" })),
});

runStorageContract("kv", {
  newStorage: async () => {
    const dir = await Deno.makeTempDir({ prefix: "trawl-kv-" });
    return new KvStorage(await Deno.openKv(`${dir}/state.kv`), "test KV");
  },
});
