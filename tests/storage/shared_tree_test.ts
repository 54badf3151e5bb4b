/**
 * Servers on one KV or one PostgreSQL (each test runs on both: tests/support/shared_state.ts)
 * share the resource tree and the rights (real `main.ts serve` processes): a
 * folder and files written through one are there on the other, and rights set through the CLI of
 * any home hold on every server within a quarter of a second.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../foundation/server_process.ts";
import { eachBackend, twoServers } from "../support/shared_state.ts";
import { sleep } from "../../engine/util/sleep.ts";

function api(url: string, token: string) {
  return (path: string, init: RequestInit = {}) =>
    fetch(`${url}/API/v1.0${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${token}`, ...init.headers },
    });
}

await eachBackend(
  "servers on one KV share the tree and the rights; rights set by the CLI hold on all",
  async (backend) => {
    await using servers = await twoServers(backend, "trawl-kvtree-");
    const { a, b, homeA, homeB, root } = servers;
    const adminA = api(a.url, a.firstToken!);
    const bobToken = (await runCli(["user", "add", "bob", "--home", homeA])).lastLine;
    const bobA = api(a.url, bobToken);
    const bobB = api(b.url, bobToken);

    // A folder and a script made through A are on B; bob's own folder is in the KV too.
    const folder = await adminA("/resources/shared/team/", { method: "PUT" });
    assert.equal(folder.status, 201);
    const put = await adminA("/resources/shared/team/x.sx", {
      method: "PUT",
      body: "VALUES((a: 1))",
    });
    assert.equal(put.status, 201);
    const listed = await bobB("/resources/shared/team/");
    assert.equal(listed.status, 200);
    assert.deepEqual((await listed.json()).map((e: { name: string }) => e.name), ["x.sx"]);
    const mine = await bobB("/resources/user/", {});
    assert.equal(mine.status, 200, "bob's folder exists on B");
    await mine.body?.cancel();
    for (const home of [homeA, homeB]) {
      const entries = await Array.fromAsync(Deno.readDir(join(home, "data", "shared")));
      assert.deepEqual(entries, [], "nothing of the tree in a home's folders");
    }

    // Everyone may only read /shared: bob's write is refused on both servers.
    const refused = await bobB("/resources/shared/team/y.sx", { method: "PUT", body: "x" });
    assert.equal(refused.status, 403);
    await refused.body?.cancel();

    // Rights set through B's home hold on A within a quarter of a second (and a bit).
    const grants = join(root, "rights.json");
    await Deno.writeTextFile(
      grants,
      JSON.stringify([{ path: "/shared/team", user: "bob", rights: ["write", "create"] }]),
    );
    const set = await runCli(["rights", "set", grants, "--home", homeB]);
    assert.equal(set.code, 0, set.stderr);
    let status = 0;
    for (let i = 0; i < 40 && status !== 201; i++) {
      const res = await bobA("/resources/shared/team/y.sx", {
        method: "PUT",
        body: "VALUES((b: 2))",
      });
      status = res.status;
      await res.body?.cancel();
      if (status !== 201) await sleep(100);
    }
    assert.equal(status, 201);
    const shown = await runCli(["rights", "show", "--home", homeA]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(JSON.parse(shown.stdout)[0].user, "bob");
    assert.equal(
      await Deno.stat(join(homeB, "conf", "rights.json")).then(() => true, () => false),
      false,
      "the rights went to the KV, not to the home",
    );

    // Rights that are not valid are refused by the CLI, and the grants in force stay.
    await Deno.writeTextFile(grants, `[{"path": "/etc", "user": "bob", "rights": ["write"]}]`);
    const bad = await runCli(["rights", "set", grants, "--home", homeA]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /rights\.json/);
    const still = await bobB("/resources/shared/team/z.sx", {
      method: "PUT",
      body: "VALUES((c: 3))",
    });
    assert.equal(still.status, 201);
    await still.body?.cancel();
  },
);

await eachBackend(
  "a table saved again and again through one server is read whole through the other: old or new, never half",
  async (backend) => {
    await using servers = await twoServers(backend, "trawl-kvtree-");
    const { a, b } = servers;
    const onA = api(a.url, a.firstToken!);
    const onB = api(b.url, a.firstToken!);
    // Two logs of 4000 lines (some 200 KB each: a table of them is several KV chunks).
    const ROWS = 4000;
    for (const tag of ["a", "b"]) {
      const lines = Array.from({ length: ROWS }, (_, i) => `${tag}-${i}-${"x".repeat(40)}\n`);
      const put = await onA(`/resources/user/${tag}.log`, {
        method: "PUT",
        body: lines.join(""),
      });
      assert.equal(put.status, 201);
    }
    const save = async (tag: string) => {
      const res = await onA("/?scriptPath=/user", {
        method: "POST",
        headers: { "Content-Type": "text/vnd.engine.script" },
        body:
          `PARSE(pattern: 'LD:line EOL', src: '${tag}.log') | save('/user/t.sxt') | select(count(*) as n)`,
      });
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
    };
    await save("a");
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 6; i++) await save(i % 2 === 0 ? "b" : "a");
      writing = false;
    })();
    // Awaited below; a read failing first must be the test's failure, not the writer's "fetch
    // failed" once the servers are stopped.
    writer.catch(() => {});
    const seen = new Set<string>();
    let reads = 0;
    while (writing || reads < 3) {
      const res = await onB(
        "/tables/user/t.sxt?acceptContentType=application/csv&opt.omitHeader=true",
      );
      assert.equal(res.status, 200);
      const rows = (await res.text()).trimEnd().split("\n");
      assert.equal(rows.length, ROWS);
      const tags = new Set(rows.map((r) => r.replace(/^"?/, "")[0]));
      assert.equal(tags.size, 1, `a table of both saves: ${[...tags]}`);
      seen.add([...tags][0]!);
      reads++;
    }
    await writer;
    assert.ok(reads >= 3);
  },
);
