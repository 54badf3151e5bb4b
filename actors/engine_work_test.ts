import assert from "node:assert/strict";
import { failureOf } from "./engine_work.ts";
import { QueryError, StorageError } from "../engine/mod.ts";
import { createLogger } from "../home/log.ts";

/** failureOf with the lines it logged. */
function failure(error: unknown): { diagnostic: ReturnType<typeof failureOf>; lines: string[] } {
  const lines: string[] = [];
  return { diagnostic: failureOf(error, createLogger((l) => lines.push(l))), lines };
}

Deno.test("a query whose storage failed under it says so, not that the server has a bug", () => {
  const { diagnostic, lines } = failure(
    new StorageError(
      "the PostgreSQL 'db.internal:5432/trawl' failed while writing results/q1: timeout",
      {
        publicMessage: "the server's storage failed while writing results/q1",
      },
    ),
  );
  assert.deepEqual(diagnostic, {
    code: "RUNTIME_ERROR",
    message: "the server's storage failed while writing results/q1",
  });
  // The host is for the log only, at WARN: not an internal error.
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, / WARN .*db\.internal:5432.*timeout/);
});

Deno.test("a QueryError keeps its diagnostic; any other error is an internal one, logged with its stack", () => {
  const own = { code: "MEMORY_LIMIT", message: "the query used more than 1 MiB" } as const;
  assert.deepEqual(failure(new QueryError(own)).diagnostic, own);
  const { diagnostic, lines } = failure(new TypeError("x is undefined"));
  assert.equal(diagnostic.code, "RUNTIME_ERROR");
  assert.match(diagnostic.message, /internal error .*a bug/);
  assert.doesNotMatch(diagnostic.message, /x is undefined/);
  assert.match(
    lines.join("\n"),
    / ERROR a query failed through an internal error\n +TypeError: x is undefined/,
  );
});
