/**
 * Requests to a real `main.ts serve` process (tests/foundation/server_process.ts) as a user with
 * a token: the steps the multi-server tests (tests/storage/pg_*) share.
 */

import assert from "node:assert/strict";
import type { ServerProcess } from "../foundation/server_process.ts";
import { sleep } from "../../engine/util/sleep.ts";

/** A request to `/API/v1.0<path>` of `server` with `token`. */
export function api(
  server: ServerProcess,
  token: string,
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${server.url}/API/v1.0${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, ...init.headers },
  });
}

/** Submits `script` as an asynchronous query; its id (201 asserted). */
export async function submit(server: ServerProcess, token: string, script: string) {
  const res = await api(server, token, "/queries?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: script,
  });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.queryId as string;
}

/**
 * The status of query `id` once it has ended. `deadlineMs` only tells a query that never ends
 * (a busy machine runs these slowly).
 */
export async function finalState(
  server: ServerProcess,
  token: string,
  id: string,
  deadlineMs = 240_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const res = await api(server, token, `/queries/${id}`).catch((e) => {
      // A server gone (refused): what it said last tells why.
      throw new Error(
        `asking for query ${id}: ${(e as Error).message}; the server's last stderr lines:\n${
          server.stderr.slice(-30).join("\n")
        }`,
        { cause: e },
      );
    });
    const body = await res.json();
    if (res.status === 200 && ["SUCCEEDED", "FAILED", "CANCELLED"].includes(body.state)) {
      return body;
    }
    if (Date.now() > deadline) throw new Error(`query ${id} did not end: ${JSON.stringify(body)}`);
    await sleep(50);
  }
}

/** Defines the FILE datastore `logs` over the folder `logs`, readable by admin. */
export async function defineLogs(server: ServerProcess, token: string, logs: string) {
  const put = await api(server, token, "/datastores/logs", {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      type: "FILE",
      fileStore: { root: logs, acl: { users: { admin: ["read", "list"] }, groups: {} } },
    }),
  });
  assert.equal(put.status, 201, await put.text());
}
