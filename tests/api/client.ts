/** Small helpers over TestServer for the API tests. */

import assert from "node:assert/strict";
import type { TestServer } from "./server.ts";
import { sleep } from "../../engine/util/sleep.ts";

/** What the helpers need of a server: one in this process (TestServer) or a child's. */
export type ApiClient = Pick<TestServer, "url" | "fetch">;

export const SCRIPT_TYPE = { "Content-Type": "text/vnd.engine.script" };

/** Posts a script to /queries; returns the response (body unread). */
export function postQuery(
  s: ApiClient,
  script: string,
  options: { user?: string; query?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return s.fetch(
    options.user ?? "alice",
    `/API/v1.0/queries?scriptPath=/user${options.query ? "&" + options.query : ""}`,
    { method: "POST", headers: { ...SCRIPT_TYPE, ...options.headers }, body: script },
  );
}

/** Posts and returns the new query id (asserting 201). */
export async function startQuery(
  s: ApiClient,
  script: string,
  options: { user?: string; query?: string; headers?: Record<string, string> } = {},
): Promise<string> {
  const res = await postQuery(s, script, options);
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.equal(res.headers.get("Location"), `/API/v1.0/queries/${body.queryId}`);
  return body.queryId;
}

export interface Status {
  queryId: string;
  state: string;
  progress: number;
  warnings: { time: string; level: string; message: string }[];
  stateChanges: { millis: number; from: string; to: string }[];
  /** docs/api.md's counters: bytesRead, rowsOut and the others. */
  stats: { bytesRead: number; rowsOut: number; readonly [counter: string]: number };
}

export async function status(s: ApiClient, id: string, user = "alice"): Promise<Status> {
  const res = await s.fetch(user, `/API/v1.0/queries/${id}`);
  assert.equal(res.status, 200);
  return await res.json();
}

/**
 * Polls the status until `done` holds (every 10 ms, at most `timeoutMs`). The bound only catches
 * a query that never gets there: it is generous, since a busy machine (CI beside other work) can
 * take a scan of a few MB many seconds, and a test that fails for a slow machine is a flaky test.
 */
export async function pollUntil(
  s: ApiClient,
  id: string,
  done: (st: Status) => boolean,
  timeoutMs = 60_000,
): Promise<Status> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const st = await status(s, id);
    if (done(st)) return st;
    if (Date.now() > until) throw new Error(`query ${id} still ${st.state} after ${timeoutMs} ms`);
    await sleep(10);
  }
}

export const FINISHED = ["SUCCEEDED", "FAILED", "CANCELLED"];

export function finished(s: ApiClient, id: string): Promise<Status> {
  return pollUntil(s, id, (st) => FINISHED.includes(st.state));
}

/** Asserts an error answer: status, code, JSON content type; returns the body. */
export async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<Record<string, unknown>> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.equal(res.headers.get("Content-Type"), "application/json; charset=UTF-8");
  const body = JSON.parse(text);
  assert.equal(body.code, code, text);
  assert.equal(typeof body.message, "string");
  return body;
}

/** A big log under /shared (about 38 MB), for queries that run long enough to be cancelled. */
export async function writeBigLog(s: TestServer, lines = 700_000): Promise<string> {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) parts.push(`${i} host-17 GET /index.html 200 5120\n`);
  return await s.write("/shared/big.log", parts.join(""));
}

/** Reads the big log; a row now and then, so that batches (and turns) keep coming. */
export const SLOW_SCRIPT =
  "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/big.log') | filter(n % 500 = 0)";

/** Host paths of this process's open file descriptors (Linux). */
export function openFiles(): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      out.push(Deno.readLinkSync(`/proc/self/fd/${e.name}`));
    } catch { /* closed meanwhile */ }
  }
  return out;
}
