/**
 * A scan of an `azblob://` store spread over two real `main.ts serve` processes on one PostgreSQL
 * (`cluster.distributeBytes` low), the blobs in Azurite: each share names whole blobs, and the
 * server that claims it opens the store through its own registry as the query's user, the key
 * read from the shared definitions (actors/worker_tree.ts withBlobStores). The answers of a
 * count, a grouped aggregate, a sort with a limit and filtered rows are those of one server alone
 * (its scan in a local scan worker); both servers held blob shares; the account key is in no row
 * of the shares table and no line the servers wrote. A user outside the store's acl gets the
 * refusal one server gives and queues no share; and a share of the admin's scan queued again as
 * that user (as a coordinator could) is refused by the server that claims it, which reads none
 * of the blobs. And on one server of the files storage, the blobs are shared among its own scan
 * workers (whole blobs per share), which read the definition from the home's files.
 */

import assert from "node:assert/strict";
import { deserialize } from "node:v8";
import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "../foundation/server_process.ts";
import { api } from "../support/server_api.ts";
import { runCli } from "../foundation/server_process.ts";
import { startPostgres } from "../support/postgres.ts";
import { countedServer, stateHome, stopServer } from "../support/shared_state.ts";
import { DEV_ACCOUNT, DEV_KEY, startAzurite } from "../support/azurite.ts";
import { openPgStorage, type PgStorage } from "../../home/storage/pg_storage.ts";
import { clone, PgShares, unframe } from "../../home/storage/pg_shares.ts";
import type { ShareTask } from "../../engine/mod.ts";
import { seededRandom } from "../support/seeded_random.ts";
import { sleep } from "../../engine/util/sleep.ts";

const BLOBS = 12;
const SRC = "azblob://arch/weblogs/2024/*.jsonl";
const SCRIPTS = [
  `READ_JSON(src: '${SRC}') | select(count(*) as rows)`,
  `READ_JSON(src: '${SRC}')
   | select(status, count(*) as n, sum(bytes) as total, max(user) as top, first(i) as f)
   | group(status)`,
  `READ_JSON(src: '${SRC}') | sort(bytes desc, i) | limit(20)`,
  `READ_JSON(src: '${SRC}') | filter(status = 500 and bytes < 400) | select(i, user, bytes)`,
  // Access-log lines (and a few that are not records) read with a pattern.
  `PARSE(pattern: '''IPADDR:ip ' ' INT:status ' ' LONG:bytes ' ' NSPACE:path''',
         src: 'azblob://arch/weblogs/access/*.log')
   | select(status, count(*) as n, sum(bytes) as total, max(ip) as top, last(path) as l)
   | group(status)`,
];

/** Access-log lines of `lines` records, one line in 500 not a record. */
function accessLog(lines: number, seed: number): string {
  const rnd = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const status = [200, 200, 404, 500][Math.floor(rnd() * 4)];
    const ip = `10.0.${Math.floor(rnd() * 4)}.${Math.floor(rnd() * 50)}`;
    out.push(`${ip} ${status} ${Math.floor(rnd() * 50000)} /p/${i % 97}`);
    if (i % 500 === 7) out.push("not a record");
  }
  return out.join("\n") + "\n";
}

/** A blob of `lines` JSON records (about 70 bytes each), numbered from `first`. */
function blob(first: number, lines: number, seed: number): string {
  const rnd = seededRandom(seed);
  const out: string[] = [];
  for (let i = first; i < first + lines; i++) {
    const status = [200, 200, 404, 500][Math.floor(rnd() * 4)];
    out.push(JSON.stringify({
      i,
      status,
      bytes: Math.floor(rnd() * 50_000),
      user: `u${Math.floor(rnd() * 40)}`,
    }));
  }
  return out.join("\n") + "\n";
}

async function submit(server: ServerProcess, token: string, script: string) {
  const res = await api(server, token, "/queries?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: script,
  });
  return { status: res.status, body: await res.json() };
}

async function finalState(server: ServerProcess, token: string, script: string) {
  const { status, body } = await submit(server, token, script);
  assert.equal(status, 201, JSON.stringify(body));
  // Only tells a query that never ends (a busy machine runs these slowly).
  const deadline = Date.now() + 240_000;
  for (;;) {
    const res = await api(server, token, `/queries/${body.queryId}`);
    const state = await res.json();
    if (res.status === 200 && ["SUCCEEDED", "FAILED", "CANCELLED"].includes(state.state)) {
      return { id: body.queryId as string, end: state as Record<string, unknown> };
    }
    if (Date.now() > deadline) throw new Error(`query did not end: ${JSON.stringify(state)}`);
    await sleep(50);
  }
}

async function answer(server: ServerProcess, token: string, script: string): Promise<unknown> {
  const { id, end } = await finalState(server, token, script);
  assert.equal(end.state, "SUCCEEDED", JSON.stringify(end));
  const res = await api(server, token, `/queries/${id}/result`);
  assert.equal(res.status, 200);
  return await res.json();
}

async function defineStore(server: ServerProcess, token: string, endpoint: string) {
  const put = await api(server, token, "/datastores/arch", {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(storeDefinition(endpoint)),
  });
  assert.equal(put.status, 201, await put.text());
}

/** The store `arch` over Azurite's account, read and listed by the admin only. */
function storeDefinition(endpoint: string) {
  return {
    type: "AZBLOB",
    azblobStore: {
      endpoint,
      accountName: DEV_ACCOUNT,
      accountKey: DEV_KEY,
      acl: { users: { admin: ["read", "list"] }, groups: {} },
    },
  };
}

interface ShareRow {
  run: string;
  share: number;
  coordinator: string;
  state: string;
  holder: string | null;
  part: string;
  task: Uint8Array;
  result: Uint8Array | null;
  error: string | null;
}

/** The rows of the shares table, each with its task as it was queued. */
function shareRows(db: PgStorage): Promise<ShareRow[]> {
  return db.sql<ShareRow[]>`
    SELECT s.run, s.share, coordinator, state, holder, part, q.task, result, error
    FROM trawl_shares s JOIN queued_tasks q ON q.run = s.run AND q.share = s.share
    ORDER BY created, s.run, s.share`;
}

const latin1 = (bytes: Uint8Array | null) =>
  bytes === null ? "" : new TextDecoder("latin1").decode(bytes);

Deno.test("a blob scan spread over two servers on one PostgreSQL answers as one server does, both held blob shares, the key stays in the definition and the store's acl is checked by the claimer", async () => {
  await using az = await startAzurite();
  await using pg = await startPostgres();
  const root = await Deno.makeTempDir({ prefix: "trawl-pgblob-" });
  const servers: ServerProcess[] = [];
  let db: PgStorage | undefined;
  try {
    const lines = 4_000;
    for (let b = 0; b < BLOBS; b++) {
      const name = `2024/part-${String(b).padStart(2, "0")}.jsonl`;
      await az.upload("weblogs", name, blob(b * lines, lines, b + 1));
    }
    for (let b = 0; b < BLOBS; b++) {
      const name = `access/part-${String(b).padStart(2, "0")}.log`;
      await az.upload("weblogs", name, accessLog(6_000, 100 + b));
    }
    // Another blob the patterns do not match: never named by a share.
    await az.upload("weblogs", "2024/notes.txt", "not a record\n");

    const url = await pg.newDatabase();
    db = await openPgStorage(url, { connections: 1 });
    const args = [
      "query.workers=1",
      "cluster.distributeBytes=1 MiB",
      "cluster.lease=2 s",
    ].flatMap((s) => ["--set", s]);
    const homes: string[] = [];
    for (const name of ["a", "b"]) {
      homes.push(await stateHome(root, name, `pg:${url}`));
      servers.push(await startServerProcess(homes.at(-1)!, args));
    }
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const token = a.firstToken!;
    // The coordinator clears a task once its answer is read: the test keeps a copy of each as
    // it was queued (a trigger of the test's own, on the table the servers made).
    await db.sql.unsafe(`
      CREATE TABLE queued_tasks (run text, share integer, task bytea);
      CREATE FUNCTION keep_task() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO queued_tasks VALUES (NEW.run, NEW.share, NEW.task); RETURN NEW; END $$;
      CREATE TRIGGER keep_task AFTER INSERT ON trawl_shares
        FOR EACH ROW EXECUTE FUNCTION keep_task();`);
    await defineStore(a, token, az.endpoint);
    // One server alone, its scans not spread (a local scan worker reads the blobs).
    const soloHome = await stateHome(root, "solo", `pg:${await pg.newDatabase()}`);
    const solo = await startServerProcess(soloHome, ["--set", "query.workers=1"]);
    servers.push(solo);
    await defineStore(solo, solo.firstToken!, az.endpoint);

    for (const script of SCRIPTS) {
      const alone = await answer(solo, solo.firstToken!, script);
      const spread = await answer(a, token, script);
      assert.ok(Array.isArray(alone) && alone.length > 0, `no rows: ${JSON.stringify(alone)}`);
      assert.deepEqual(spread, alone, script);
    }
    assert.deepEqual(await answer(b, token, SCRIPTS[0]!), [{ rows: BLOBS * lines }]);

    const rows = await shareRows(db);
    const runs = new Set(rows.map((r) => r.run));
    assert.ok(runs.size >= SCRIPTS.length + 1, `runs: ${runs.size}`);
    assert.ok(rows.every((r) => r.state === "done"), JSON.stringify(rows.map((r) => r.state)));
    // Each share names whole blobs of the store (none of the blob that does not match).
    for (const r of rows) {
      const task = deserializeTask(r.task);
      assert.ok(task.shares.length > 0);
      for (const s of task.shares) {
        assert.match(
          s.uri,
          /^azblob:\/\/arch\/weblogs\/(2024\/part-\d\d\.jsonl|access\/part-\d\d\.log)$/,
        );
        assert.deepEqual([s.start, s.end], [0, s.size]);
      }
      assert.equal(task.query.user.name, "admin");
    }
    const holders = new Set(rows.map((r) => r.holder));
    assert.equal(holders.size, 2, `blob shares held by ${[...holders]}`);
    // The key is in no row of the table (the part, the task queued, the answer, an error).
    for (const r of rows) {
      for (const text of [r.part, r.error ?? "", latin1(r.task), latin1(r.result)]) {
        assert.ok(!text.includes(DEV_KEY), `the account key in share ${r.share} of ${r.run}`);
      }
    }

    // Eve, outside the store's acl: the refusal one server gives, and no share queued.
    const eve = (await runCli(["user", "add", "eve", "--home", homes[0]!])).lastLine;
    const soloEve = (await runCli(["user", "add", "eve", "--home", soloHome])).lastLine;
    const refusedAlone = await submit(solo, soloEve, SCRIPTS[0]!);
    const refused = await submit(a, eve, SCRIPTS[0]!);
    assert.equal(refused.status, 404, JSON.stringify(refused.body));
    assert.deepEqual(refused, refusedAlone);
    assert.match(refused.body.message, /no datastore 'arch' that you may read/);
    assert.equal((await shareRows(db)).length, rows.length, "a share queued for eve");

    // A share of the admin's count queued again as eve: the server that claims it checks the
    // store's acl for her and reads nothing.
    const shares = new PgShares(db, "test-coordinator", 2_000);
    const first = rows[0]!;
    const task = deserializeTask(first.task);
    const asEve: ShareTask = {
      ...task,
      query: { ...task.query, user: { name: "eve", groups: [], admin: false } },
    };
    const run = crypto.randomUUID();
    await shares.queue(run, [{ part: first.part, task: clone(asEve) }]);
    const deadline = Date.now() + 120_000;
    let ended: ShareRow | undefined;
    for (;;) {
      await shares.seen([run]);
      ended = (await shareRows(db)).find((r) => r.run === run && r.state !== "queued");
      if (ended !== undefined && ended.state !== "running") break;
      if (Date.now() > deadline) throw new Error(`eve's share: ${JSON.stringify(ended)}`);
      await sleep(20);
    }
    assert.equal(ended.state, "done");
    assert.ok(ended.holder === first.coordinator || holders.has(ended.holder));
    const messages = unframe(ended.result!) as Record<string, unknown>[];
    const progress = messages.find((m) => m.kind === "progress") as { bytes: number };
    assert.equal(progress.bytes, 0, "eve's share read blob bytes");
    const failed = messages.find((m) => m.kind === "failed") as {
      diagnostic: { code: string; message: string };
    };
    assert.ok(failed !== undefined, JSON.stringify(messages));
    assert.match(failed.diagnostic.code, /^(NOT_FOUND|FORBIDDEN)$/);
    assert.ok(!failed.diagnostic.message.includes(DEV_KEY));

    for (const s of servers) {
      for (const line of [...s.stdout, ...s.stderr]) {
        assert.ok(!line.includes(DEV_KEY), `the account key in a server's log: ${line}`);
      }
    }
  } finally {
    await db?.close();
    for (const s of servers) await s.stop("SIGKILL").catch(() => {});
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the blobs of an azblob store are shared among one server's own scan workers", async () => {
  await using az = await startAzurite();
  const root = await Deno.makeTempDir({ prefix: "trawl-blobworkers-" });
  // The files storage: the workers read the definition from the home's files.
  const home = join(root, "home");
  const two = await countedServer(home, 2);
  try {
    // About 18 MiB in 12 blobs: more than two workers' 8 MiB at least, cut between blobs.
    const lines = 25_000;
    let total = 0;
    for (let b = 0; b < BLOBS; b++) {
      const text = blob(b * lines, lines, b + 1);
      for (const line of text.trimEnd().split("\n")) total += JSON.parse(line).bytes;
      await az.upload("weblogs", `2024/part-${String(b).padStart(2, "0")}.jsonl`, text);
    }
    const token = two.token!;
    const call = (path: string, init: RequestInit) =>
      fetch(`${two.server.url}API/v1.0${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...init.headers },
      });
    const put = await call("/datastores/arch", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(storeDefinition(az.endpoint)),
    });
    assert.equal(put.status, 201, await put.text());
    const res = await call("/?scriptPath=/user", {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: `READ_JSON(src: '${SRC}') | select(count(*) as rows, sum(bytes) as total)`,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.deepEqual(JSON.parse(text), [{ rows: BLOBS * lines, total }]);
    assert.equal(two.shares.started, 2, "two shares on the workers");
    assert.deepEqual(two.shares.failures, []);
    assert.deepEqual(two.shares.ends, { groups: 2 });
  } finally {
    await stopServer(two.server);
    await Deno.remove(root, { recursive: true });
  }
});

/** A task as the shares table keeps it (one structured clone, pg_shares.ts `clone`). */
function deserializeTask(bytes: Uint8Array): ShareTask {
  return deserialize(bytes) as ShareTask;
}
