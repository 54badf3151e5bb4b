import assert from "node:assert/strict";
import { join } from "node:path";
import {
  closeStorageWorkerDeps,
  storageFailure,
  storageWorkerDeps,
  workerKvPath,
} from "./worker_tree.ts";
import { openKvStorage } from "../home/storage/kv_storage.ts";
import { StorageResourceTree } from "../home/storage_tree.ts";
import type { User } from "../engine/mod.ts";

const bob: User = { name: "bob", groups: ["ops"], admin: false };

Deno.test("workerKvPath: a KV file or a PostgreSQL database, not a remote KV nor one in memory", () => {
  assert.equal(workerKvPath({ kind: "kv", where: "/var/trawl/state.kv" }), "/var/trawl/state.kv");
  assert.equal(workerKvPath({ kind: "kv", where: "state.kv" }), "state.kv");
  assert.equal(
    workerKvPath({ kind: "kv", where: "https://api.deno.com/databases/x/connect" }),
    undefined,
  );
  assert.equal(workerKvPath({ kind: "kv", where: ":memory:" }), undefined);
  assert.equal(workerKvPath({ kind: "files" }), undefined);
  assert.equal(
    workerKvPath({ kind: "pg", url: "postgres://trawl@db:5432/trawl" }),
    "pg:postgres://trawl@db:5432/trawl",
  );
});

Deno.test("storageWorkerDeps opens the KV once, reads its tree and definitions with each task's grants", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-worker-tree-" });
  const kvFile = join(dir, "state.kv");
  // What a server wrote: a file of its tree and a FILE datastore definition.
  const server = await openKvStorage(kvFile);
  try {
    const tree = new StorageResourceTree(server);
    await tree.ensureRoots();
    await tree.ensureFolder(["shared", "team"]);
    await tree.write("/shared/team/a.log", new TextEncoder().encode("1 a\n2 b\n"));
    await server.put(
      ["data", "system", "datastores", "logs.json"],
      new TextEncoder().encode(JSON.stringify({ type: "FILE", fileStore: { root: dir } })),
    );

    const first = await storageWorkerDeps(kvFile, []);
    assert.equal(await storageWorkerDeps(kvFile, []), first, "one KV per worker, kept");
    const text = await new Response(
      await first.tree.open("/shared/team/a.log", new AbortController().signal, 4),
    ).text();
    assert.equal(text, "2 b\n", "read from an offset, for a share's byte range");
    // /shared/team is bob's to write only with a grant, and the grants are each task's.
    assert.equal(first.tree.may(bob, "write", "/shared/team/a.log"), false);
    await storageWorkerDeps(kvFile, [{ path: "/shared/team", group: "ops", rights: ["write"] }]);
    assert.equal(first.tree.may(bob, "write", "/shared/team/a.log"), true);
    await storageWorkerDeps(kvFile, []);
    assert.equal(first.tree.may(bob, "write", "/shared/team/a.log"), false);

    // The FILE store's definition is read from the KV (the admin may use a store without acl).
    const admin: User = { name: "admin", groups: [], admin: true };
    const store = await first.datastores.forUri("file://logs/x.log", admin);
    assert.ok(store);
    await assert.rejects(
      first.datastores.forUri("file://nothere/x.log", admin),
      /no FILE datastore/,
    );
  } finally {
    server.close();
    // The worker's KV (this thread's, here) is closed by the worker's end; the test closes it.
    await closeStorageWorkerDeps();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a KV the worker cannot open fails the task, and the next task tries again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-worker-tree-" });
  const kvFile = join(dir, "later", "state.kv");
  try {
    const failure = await storageWorkerDeps(kvFile, []).catch((e) => e);
    assert.match(failure.message, /cannot open the KV/);
    // An internal failure: the server's log gets the reason (the client a generic message).
    const message = storageFailure(failure);
    assert.equal(message.kind, "failed");
    assert.match(JSON.stringify(message), /could not open the server's storage.*cannot open/);
    // Not remembered as failed: once the folder is there, the next task opens it.
    await Deno.mkdir(join(dir, "later"));
    const deps = await storageWorkerDeps(kvFile, []);
    assert.equal(await deps.tree.stat("/shared"), null, "an empty KV: no folders yet");
  } finally {
    await closeStorageWorkerDeps();
    await Deno.remove(dir, { recursive: true });
  }
});
