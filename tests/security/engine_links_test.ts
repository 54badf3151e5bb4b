/**
 * End to end through the engine: a table or a log that a link in the user's folder points at
 * is read only when the user may read it where it really is.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { engineHome } from "../support/engine_home.ts";

Deno.test("a query reads no table or log of another user through a link", async () => {
  await using home = await engineHome();
  await home.run("VALUES((a: 1), (a: 2)) | save('/user/t.sxt')");
  const data = join(home.dir, "data");
  await Deno.mkdir(join(data, "users", "bob"), { recursive: true });
  await Deno.rename(join(data, "users", "alice", "t.sxt"), join(data, "users", "bob", "t.sxt"));
  await Deno.writeTextFile(join(data, "users", "bob", "b.log"), "bob's secret line\n");
  await Deno.symlink(join(data, "users", "bob", "t.sxt"), join(data, "users", "alice", "l.sxt"));
  await Deno.symlink(join(data, "users", "bob"), join(data, "users", "alice", "bob"));

  for (const table of ["/user/l.sxt", "/user/bob/t.sxt"]) {
    const diagnostics = await home.diagnose(`@[${table}]`);
    assert.ok(diagnostics.length > 0, table);
    assert.match(diagnostics.map((d) => d.message).join("\n"), /lack the read right/, table);
  }
  const r = await home.run("PARSE(pattern: '''LD:line EOL''', src: '/user/bob/*.log')");
  assert.deepEqual(r.rows, []);
  assert.ok(r.warnings.length > 0);

  // A link to a table the user may read (in /shared) is followed.
  await home.run("VALUES((a: 3)) | save('/user/s.sxt')");
  await Deno.rename(join(data, "users", "alice", "s.sxt"), join(data, "shared", "s.sxt"));
  await Deno.symlink(join(data, "shared", "s.sxt"), join(data, "users", "alice", "s.sxt"));
  assert.deepEqual((await home.run("@[/user/s.sxt]")).rows, [{ a: 3 }]);
});

Deno.test("save writes no table through a link to a place the user may not write", async () => {
  await using home = await engineHome();
  const data = join(home.dir, "data");
  // A shared table alice may read but not write, and a link to it in her own folder.
  await home.run("VALUES((a: 1)) | save('/user/x.sxt')");
  await Deno.rename(join(data, "users", "alice", "x.sxt"), join(data, "shared", "x.sxt"));
  const before = await Deno.readFile(join(data, "shared", "x.sxt"));
  await Deno.symlink(join(data, "shared", "x.sxt"), join(data, "users", "alice", "x.sxt"));
  // And a link to a shared folder, to create a table in it.
  await Deno.mkdir(join(data, "shared", "dir"));
  await Deno.symlink(join(data, "shared", "dir"), join(data, "users", "alice", "dir"));

  for (const target of ["/user/x.sxt", "/user/dir/new.sxt"]) {
    const diagnostics = await home.diagnose(`VALUES((a: 2)) | save('${target}')`);
    assert.ok(diagnostics.length > 0, target);
  }
  assert.deepEqual(await Deno.readFile(join(data, "shared", "x.sxt")), before);
  await assert.rejects(Deno.stat(join(data, "shared", "dir", "new.sxt")));
});
