import assert from "node:assert/strict";
import { runShare } from "./share_run.ts";
import { StorageError } from "./contracts/storage.ts";
import type { ShareMessage, ShareTask } from "./contracts/scan_workers.ts";
import type { QueryContext } from "./contracts/query_context.ts";

/** A share of a source whose datastore lookup fails with `error`; the messages it posted. */
async function failing(error: Error): Promise<ShareMessage[]> {
  const task = {
    query: {
      user: { name: "alice", admin: false, groups: [] },
      workDir: "/users/alice",
      timeZone: "UTC",
    },
    now: 0,
    node: 0,
    part: { kind: "source", src: "/shared/a.log" },
    shares: [],
    limits: {},
  } as unknown as ShareTask;
  const datastores = {
    forUri: () => Promise.reject(error),
  } as unknown as QueryContext["datastores"];
  const posted: ShareMessage[] = [];
  await runShare(task, { datastores }, (m) => posted.push(m));
  return posted;
}

Deno.test("a worker whose storage fails under it says what failed, not that it has a bug", async () => {
  const posted = await failing(
    new StorageError(
      "the PostgreSQL 'db.internal:5432/trawl' failed while reading datastores: timeout",
      {
        publicMessage: "the server's storage failed while reading datastores",
      },
    ),
  );
  assert.deepEqual(posted, [{
    kind: "failed",
    diagnostic: {
      code: "RUNTIME_ERROR",
      message: "the server's storage failed while reading datastores",
    },
  }]);
});

Deno.test("any other error of a worker is posted as a bug's, naming the worker", async () => {
  const posted = await failing(new TypeError("x is undefined"));
  assert.deepEqual(posted, [{
    kind: "failed",
    code: "INTERNAL",
    message: "a scan worker failed (x is undefined)",
  }]);
});
