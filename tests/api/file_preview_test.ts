/**
 * `GET /preview/<path>`: a file's first lines for the console, read from its start and never
 * more than 64 KiB of it; the same rights as reading the file.
 */

import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { expectError } from "./client.ts";
import { PREVIEW_BYTES } from "../../routes/file_preview.ts";

const P = "/API/v1.0/preview";

Deno.test("a large file's first lines, its size and date, read no further than 64 KiB", async () => {
  await using s = await startTestServer();
  const lines: string[] = [];
  for (let i = 0; i < 200_000; i++) lines.push(`line ${i} ${"x".repeat(i % 40)}`);
  const text = lines.join("\n") + "\n";
  await s.write("/shared/big.log", text);
  const res = await s.fetch("alice", `${P}/shared/big.log`);
  assert.equal(res.status, 200);
  const got = await res.json();
  assert.equal(got.path, "/shared/big.log");
  assert.equal(got.size, new TextEncoder().encode(text).length);
  assert.ok(Math.abs(Date.parse(got.modified) - Date.now()) < 600_000, got.modified);
  assert.deepEqual(got.lines, lines.slice(0, 20));
  assert.equal(got.complete, false);
  // As many lines as 64 KiB hold, the cut one left out.
  const many = await (await s.fetch("alice", `${P}/shared/big.log?lines=200`)).json();
  assert.deepEqual(many.lines, lines.slice(0, 200));
  assert.ok(many.lines.join("\n").length < PREVIEW_BYTES);
});

Deno.test("a small file is complete; CRLF lines are lines", async () => {
  await using s = await startTestServer();
  await s.write("/shared/small.log", "a\r\nb\r\n");
  const got = await (await s.fetch("alice", `${P}/shared/small.log`)).json();
  assert.deepEqual(got.lines, ["a", "b"]);
  assert.equal(got.complete, true);
  const cut = await (await s.fetch("alice", `${P}/shared/small.log?lines=1`)).json();
  assert.deepEqual(cut.lines, ["a"]);
  assert.equal(cut.complete, false);
});

Deno.test("what one may not read is 404 or 403; bad lines and folders are refused", async () => {
  await using s = await startTestServer();
  const put = await s.fetch("alice", "/API/v1.0/resources/user/secret.log", {
    method: "PUT",
    body: "alice only\n",
  });
  assert.ok(put.ok, await put.text());
  assert.equal((await s.fetch("alice", `${P}/user/secret.log`)).status, 200);
  await expectError(await s.fetch("bob", `${P}/users/alice/secret.log`), 404, "NOT_FOUND");
  await expectError(await s.fetch("alice", `${P}/user/none.log`), 404, "NOT_FOUND");
  await expectError(await s.fetch("alice", `${P}/user`), 404, "NOT_FOUND");
  await expectError(await s.fetch("alice", `${P}/user/secret.log?lines=0`), 400, "BAD_PARAMETER");
  await expectError(
    await s.fetch("alice", `${P}/user/secret.log?lines=201`),
    400,
    "BAD_PARAMETER",
  );
  await expectError(
    await s.fetch("alice", `${P}/user%2F..%2F..%2Fetc%2Fpasswd`),
    400,
    "BAD_PARAMETER",
  );
  const noToken = await fetch(`${s.url}${P}/user/secret.log`);
  assert.equal(noToken.status, 401);
  await noToken.body?.cancel();
});
