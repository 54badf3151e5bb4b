import assert from "node:assert/strict";
import { engineHome } from "../../tests/support/engine_home.ts";
import { compile, execute } from "../engine.ts";
import { schemaToJson } from "../values/types.ts";
import { QueryError } from "../front/diagnostics.ts";
import { smallDisk } from "../../tests/support/small_disk.ts";

Deno.test("save() writes a table that @[path] reads back, and passes the rows on", async () => {
  await using home = await engineHome();
  const saved = await home.run(
    "VALUES((a: 1, ip: 10.0.0.1), (a: 2, ip: null)) | save('/user/out/t.sxt') | select(a)",
    {},
  ).catch((e) => e);
  // The folder must exist: save does not make folders.
  assert.ok(saved instanceof Error && /does not exist/.test(saved.message), String(saved));
  await Deno.mkdir(home.tree.resolve(home.user, "/user/out").real);
  const first = await home.run(
    "VALUES((a: 1, ip: 10.0.0.1), (a: 2, ip: null)) | save('out/t.sxt')",
  );
  assert.equal(first.rows.length, 2);
  const back = await home.run("@[/user/out/t.sxt] | sort(a desc)");
  assert.deepEqual(back.rows.map((r) => [r.a, r.ip === null ? null : "ip"]), [[2, null], [
    1,
    "ip",
  ]]);
  assert.deepEqual(schemaToJson(back.schema), { a: "INTEGER", ip: "?IPADDR" });
});

Deno.test("a cancelled save leaves the earlier table as it was", async () => {
  await using home = await engineHome();
  await home.run("VALUES((a: 0)) | save('/user/t.sxt')");
  const rows = Array.from({ length: 3000 }, (_, i) => `(a: ${i + 1})`).join(", ");
  const compiled = await compile({ text: `VALUES(${rows}) | save('/user/t.sxt')` }, home.context());
  assert.ok(compiled.ok);
  const controller = new AbortController();
  const run = execute(compiled.plan, { signal: controller.signal });
  const iterator = run.batches[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).done, false);
  controller.abort(new DOMException("cancelled by the test", "AbortError"));
  await assert.rejects(() => iterator.next(), /cancelled by the test/);
  const back = await home.run("@[/user/t.sxt]");
  assert.deepEqual(back.rows, [{ a: 0 }]);
  const leftovers = [...Deno.readDirSync(home.tree.resolve(home.user, "/user").real)]
    .map((e) => e.name);
  assert.deepEqual(leftovers, ["t.sxt"]);
});

Deno.test("save() refuses a path that is not .sxt or where the user may not create", async () => {
  await using home = await engineHome();
  const notTable = await home.diagnose("VALUES((a: 1)) | save('/user/t.json')");
  assert.equal(notTable[0]!.code, "BAD_ARGUMENT");
  const forbidden = await home.diagnose("VALUES((a: 1)) | save('/shared/t.sxt')");
  assert.equal(forbidden[0]!.code, "FORBIDDEN");
  assert.match(forbidden[0]!.message, /create/);
});

Deno.test("a table with a 234-character name is saved: its temporary name stays short", async () => {
  await using home = await engineHome();
  const name = `${"t".repeat(234)}.sxt`;
  const { rows } = await home.run(`VALUES((a: 1)) | save('/user/${name}')`);
  assert.equal(rows.length, 1);
  const back = await home.run(`@[/user/${name}]`);
  assert.deepEqual(back.rows, [{ a: 1 }]);
  const names = await Array.fromAsync(Deno.readDir(home.tree.resolve(home.user, "/user").real));
  assert.deepEqual(names.map((e) => e.name), [name]); // no temporary file left
});

Deno.test("a table with a 255-byte name, the most a file name may have, is saved", async () => {
  await using home = await engineHome();
  const name = `${"é".repeat(124)}ttt.sxt`;
  assert.equal(new TextEncoder().encode(name).length, 255);
  await home.run(`VALUES((a: 1)) | save('/user/${name}')`);
  assert.deepEqual((await home.run(`@[/user/${name}]`)).rows, [{ a: 1 }]);
});

Deno.test("a full disk during save fails the query with 'no space left on the device'", async (t) => {
  await using home = await engineHome();
  await using disk = await smallDisk(`${home.tree.resolve(home.user, "/user").real}/small`);
  if (disk === null) {
    // Mounting needs root (as in the CI container); without it there is no full disk to test on.
    await t.step({ name: "needs a tmpfs mount", ignore: true, fn: () => {} });
    return;
  }
  const rows = Array.from({ length: 5000 }, (_, i) => `(a: ${i}, s: 'some text to fill')`);
  await assert.rejects(
    () => home.run(`VALUES(${rows.join(", ")}) | save('/user/small/t.sxt')`),
    (e: unknown) =>
      e instanceof QueryError && e.diagnostic.code === "RUNTIME_ERROR" &&
      /no space left on the device while saving the table '\/users\/alice\/small\/t\.sxt'/.test(
        e.message,
      ),
  );
  assert.deepEqual(await Array.fromAsync(Deno.readDir(disk.dir)), []); // the temporary file is gone
});

Deno.test("save(...) | limit(n) saves every row and answers n", async () => {
  await using home = await engineHome();
  const rows = Array.from({ length: 5000 }, (_, i) => `(a: ${i})`).join(", ");
  const first = await home.run(`VALUES(${rows}) | save('/user/t.sxt') | limit(3)`);
  assert.deepEqual(first.rows, [{ a: 0 }, { a: 1 }, { a: 2 }]);
  const back = await home.run("@[/user/t.sxt] | select(count(*) as n, max(a) as m)");
  assert.deepEqual(back.rows, [{ n: 5000, m: 4999 }]);
  // Through a projection, with an offset, and limit(0): the same.
  await home.run(`VALUES(${rows}) | save('/user/u.sxt') | select(a * 2 as b) | limit(2, 10)`)
    .then((r) => assert.deepEqual(r.rows, [{ b: 20 }, { b: 22 }]));
  assert.deepEqual((await home.run("@[/user/u.sxt] | select(count(*) as n)")).rows, [{ n: 5000 }]);
  assert.deepEqual((await home.run(`VALUES(${rows}) | save('/user/v.sxt') | limit(0)`)).rows, []);
  assert.deepEqual((await home.run("@[/user/v.sxt] | select(count(*) as n)")).rows, [{ n: 5000 }]);
});

Deno.test("save(...) | limit(n) cancelled after its rows, while the save reads on, leaves the earlier table", async () => {
  await using home = await engineHome();
  await home.run("VALUES((a: 0)) | save('/user/t.sxt')");
  const rows = Array.from({ length: 3000 }, (_, i) => `(a: ${i + 1})`).join(", ");
  const compiled = await compile(
    { text: `VALUES(${rows}) | save('/user/t.sxt') | limit(1)` },
    home.context(),
  );
  assert.ok(compiled.ok);
  const controller = new AbortController();
  const run = execute(compiled.plan, { signal: controller.signal });
  const iterator = run.batches[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.deepEqual(first.value, [{ a: 1 }]);
  controller.abort(new DOMException("cancelled by the test", "AbortError"));
  await assert.rejects(() => iterator.next(), /cancelled by the test/);
  assert.deepEqual((await home.run("@[/user/t.sxt]")).rows, [{ a: 0 }]);
});
