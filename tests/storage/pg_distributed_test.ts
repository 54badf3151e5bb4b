/**
 * One query's scan spread over two real `main.ts serve` processes on one PostgreSQL
 * (`cluster.distributeBytes` low, actors/distributed_scans.ts, the cluster of
 * tests/support/pg_cluster.ts): the answers of a count, grouped aggregates, a sort with a limit
 * and filtered rows (few, and many: answers past `cluster.shareAnswerBytes`, written as segments
 * in the storage) are those of one server alone (a third server on a database of its own,
 * distribution off); both servers ran shares (the shares table says who held each); three
 * servers holding shares of one scan at once, one of them not the coordinator killed with
 * SIGKILL while it holds one (paused first, and seen holding it in the table while paused: the
 * kill always catches it holding): it is lost once its lease lapses, runs again on another
 * server, and the query still SUCCEEDS with the right count (nothing doubled, nothing lost); a
 * cancelled query has its shares cancelled and the other server stops its worker on its share;
 * the coordinator killed mid-scan: its query is FAILED through the other server, nothing of its
 * run is left running there, and that server then spreads a scan alone; the database stopped
 * and started again mid-scan: the query SUCCEEDS with the right count (an answer that could not
 * be written is claimed again once its lease lapsed); a share lost for the last time fails its
 * query as RUNTIME_ERROR naming the share, its cause in the coordinator's log only. And the
 * shares table itself
 * (home/storage/pg_shares.ts), two claimers on one database: a lapsed lease claimed again, a
 * superseded attempt's answer ignored, a share failed naming it once lost MAX_ATTEMPTS times, a
 * run whose coordinator is unheard of neither claimed nor kept (and its shares queued again when
 * it asks for them after all), a server stopping giving back
 * what it runs for others and cancelling its own runs, a cancelled share's holder losing it, the
 * progress a holder tells, the signals heard.
 */

import assert from "node:assert/strict";
import type { ServerProcess } from "../foundation/server_process.ts";
import { api, finalState, submit } from "../support/server_api.ts";
import { type Postgres, startPostgres } from "../support/postgres.ts";
import {
  type Cluster,
  PATTERN,
  pause,
  pidOf,
  shareName,
  type ShareRow,
  shareRows,
  until,
  untilDisconnected,
  untilShares,
  withCluster as withServers,
} from "../support/pg_cluster.ts";
import { openPgStorage } from "../../home/storage/pg_storage.ts";
import {
  ABANDONED,
  clone,
  frames,
  MAX_ATTEMPTS,
  PgShares,
  unframe,
} from "../../home/storage/pg_shares.ts";
import { sleep } from "../../engine/util/sleep.ts";

const SRC = "file://logs/*.log";

const SCRIPTS = [
  `PARSE(pattern: '''${PATTERN}''', src: '${SRC}') | select(count(*) as rows)`,
  `PARSE(pattern: '''${PATTERN}''', src: '${SRC}')
   | select(status, count(*) as n, sum(bytes) as total, min(bytes) as lo, max(ip) as top,
            count_distinct(path) as paths, first(ip) as f, last(bytes) as l)
   | group(status)`,
  `PARSE(pattern: '''${PATTERN}''', src: '${SRC}') | sort(bytes desc, path) | limit(25)`,
  `PARSE(pattern: '''${PATTERN}''', src: '${SRC}') | filter(status = 500 and bytes < 40)`,
  // A quarter of the records: every share's answer passes cluster.shareAnswerBytes (a segment).
  `PARSE(pattern: '''${PATTERN}''', src: '${SRC}') | filter(status = 404)`,
];

async function answer(server: ServerProcess, token: string, script: string) {
  const id = await submit(server, token, script);
  const end = await finalState(server, token, id);
  assert.equal(end.state, "SUCCEEDED", JSON.stringify(end));
  const res = await api(server, token, `/queries/${id}/result`);
  assert.equal(res.status, 200);
  return { id, rows: await res.json(), end };
}

/**
 * The cluster of these tests (`size` servers, two by default; `lines` records in each of two
 * logs, a few lines that are not records among them; a share answering more than 256 KiB
 * writes its answer as a segment in the storage).
 */
function withCluster(
  pg: Postgres,
  lines: number,
  body: (c: Cluster) => Promise<void>,
  size = 2,
  solo = false,
): Promise<void> {
  return withServers(pg, { lines, size, solo, junk: true, answerBytes: "256 KiB" }, body);
}

Deno.test("a scan spread over two servers on one PostgreSQL answers as one server does, and both ran shares", async () => {
  await using pg = await startPostgres();
  await withCluster(
    pg,
    150_000,
    async (cluster) => {
      const { a, token } = cluster;
      // One server alone, its scans not spread: the answers to compare with.
      const solo = cluster.solo!;
      for (const script of SCRIPTS) {
        const alone = await answer(solo, solo.firstToken!, script);
        const spread = await answer(a, token, script);
        assert.deepEqual(spread.rows, alone.rows, script);
        assert.ok(
          Array.isArray(spread.rows) && spread.rows.length > 0,
          `no rows: ${JSON.stringify(spread.rows)}`,
        );
      }
      assert.equal(await solo.stop(), 0);
      const rows = await shareRows(cluster.db);
      // Every script ran as shares (4 each at least), every one done once.
      assert.ok(new Set(rows.map((r) => r.run)).size >= SCRIPTS.length, JSON.stringify(rows));
      assert.ok(
        rows.every((r) => ["done", "cancelled"].includes(r.state)),
        JSON.stringify(rows),
      );
      // The last script's shares answered through segments, done by either server.
      const last = rows.filter((r) => r.run === rows.at(-1)!.run);
      assert.ok(last.every((r) => r.state === "done" && r.segment !== null), JSON.stringify(last));
      const holders = new Set(rows.filter((r) => r.state === "done").map((r) => r.holder));
      assert.equal(holders.size, 2, `shares held by ${[...holders]}`);
      // The coordinator (A) held some, B the others.
      const coordinator = rows[0]!.coordinator;
      assert.ok(holders.has(coordinator));
    },
    2,
    true,
  );
});

Deno.test("three servers: one scan's shares held by all three; one of them killed while it holds shares: they run again elsewhere and the query succeeds once; a cancel stops another server's part", async () => {
  await using pg = await startPostgres();
  // 2 x 600k records, about 50 MB: shares long enough to be seen held.
  const lines = 600_000;
  await withCluster(pg, lines, async (cluster) => {
    const { a, b, token, homes, spread } = cluster;
    const count = SCRIPTS[0]!;

    // The servers by their names in the shares table (B and C: not the coordinator).
    const byName = new Map<string, { server: ServerProcess; pid: number }>();
    for (const [i, server] of spread.entries()) {
      if (i > 0) byName.set(await shareName(server), { server, pid: await pidOf(homes[i]!) });
    }

    // A cancel: a share another server holds is cancelled and that server stops its worker. Its
    // holder is paused (SIGSTOP) once seen holding it, until its statements sent are done, and
    // seen holding it again while paused (else let go, and caught again); the query is cancelled
    // while it is paused; let go, it stops its worker. Unless its worker had ended just before
    // the pause, its answer not yet sent: refused then (the share was cancelled), it says so in
    // its log, and the cancel is tried again with a new query.
    let bShare: ShareRow | undefined;
    for (let tries = 1; bShare === undefined; tries++) {
      assert.ok(tries <= 5, "the holder's worker ended before each pause");
      const cancelled = await submit(a, token, count);
      let caught: { row: ShareRow; pid: number; server: ServerProcess } | undefined;
      while (caught === undefined) {
        const rows = await untilShares(
          cluster.db,
          "no other server held a share",
          (rows) => rows.some((r) => r.state === "running" && r.holder !== r.coordinator),
        );
        const seen = rows.find((r) => r.state === "running" && r.holder !== r.coordinator)!;
        const holder = byName.get(seen.holder!)!;
        await pause(cluster.db, holder.pid);
        const still = (await shareRows(cluster.db)).find((r) =>
          r.run === seen.run && r.share === seen.share && r.attempt === seen.attempt &&
          r.state === "running" && r.holder === seen.holder
        );
        if (still === undefined) Deno.kill(holder.pid, "SIGCONT");
        else caught = { row: still, ...holder };
      }
      try {
        const stop = await api(a, token, `/queries/${cancelled}`, { method: "DELETE" });
        assert.equal(stop.status, 200, await stop.text());
        assert.equal((await finalState(a, token, cancelled)).state, "CANCELLED");
      } finally {
        Deno.kill(caught.pid, "SIGCONT");
      }
      const { row } = caught;
      const late =
        `${row.run}: the answer of share ${row.share} (attempt ${row.attempt}) came late`;
      const seen = await until(
        "the other server neither stopped its share nor had its answer refused",
        async () => ({
          stopped: (await shareRows(cluster.db)).some((r) =>
            r.run === row.run && r.share === row.share && r.stopped_at !== null
          ),
          refused: caught.server.stderr.some((line) => line.includes(late)),
        }),
        (seen) => seen.stopped || seen.refused,
      );
      if (seen.stopped) bShare = row;
    }
    const held = await untilShares(
      cluster.db,
      "the other server did not stop its share",
      (rows) =>
        rows.some((r) =>
          r.run === bShare.run && r.share === bShare.share && r.stopped_at !== null
        ) && rows.every((r) => r.state !== "running" && r.state !== "queued"),
    );
    assert.ok(held.filter((r) => r.run === bShare.run).some((r) => r.state === "cancelled"));

    // One scan: each of the three servers holds one of its shares at once. Then B, not the
    // coordinator, is killed while it holds one: paused first (SIGSTOP) until its statements
    // sent are done, seen in the table still holding a share (paused, it can answer nothing;
    // when it held none by then it is let go and caught again), killed (SIGKILL): its share runs
    // again elsewhere once its lease lapsed.
    const bName = await shareName(b);
    const bPid = await pidOf(homes[1]!);
    const id = await submit(a, token, count);
    const before = await untilShares(
      cluster.db,
      "the three servers never held shares of one scan at once",
      (rows) =>
        new Set(
          rows.filter((r) => r.run !== bShare.run && r.state === "running").map((r) => r.holder),
        ).size === 3,
    );
    const run = before.find((r) => r.run !== bShare.run && r.state === "running")!.run;
    const bHolds = (rows: ShareRow[]) =>
      rows.find((r) => r.run === run && r.state === "running" && r.holder === bName);
    let dying: ShareRow | undefined;
    while (dying === undefined) {
      await untilShares(
        cluster.db,
        "B held no share of the scan any more",
        (rows) => bHolds(rows) !== undefined,
      );
      await pause(cluster.db, bPid);
      dying = bHolds(await shareRows(cluster.db));
      if (dying === undefined) Deno.kill(bPid, "SIGCONT");
    }
    await b.stop("SIGKILL");
    // Once its connections are gone nothing of B can reach the table: it died holding the
    // share (its attempt did not end it).
    await untilDisconnected(cluster.db, bPid);
    const atDeath = (await shareRows(cluster.db)).find((r) =>
      r.run === run && r.share === dying.share
    )!;
    assert.ok(
      atDeath.attempt > dying.attempt || atDeath.state === "running",
      `B's attempt ended its share after it was paused: ${JSON.stringify({ dying, atDeath })}`,
    );
    const end = await finalState(a, token, id);
    assert.equal(end.state, "SUCCEEDED", JSON.stringify(end));
    const result = await (await api(a, token, `/queries/${id}/result`)).json();
    // Nothing doubled, nothing lost: what one server alone counts (the first test).
    assert.deepEqual(result, [{ rows: 2 * lines }]);
    const after = (await shareRows(cluster.db)).filter((r) => r.run === run);
    assert.ok(after.every((r) => r.state === "done"), JSON.stringify(after));
    // B's share ran again, by another server.
    const rerun = after.find((r) => r.share === dying.share)!;
    assert.ok(rerun.attempt > dying.attempt, JSON.stringify({ dying, rerun }));
    assert.notEqual(rerun.holder, bName, JSON.stringify({ dying, rerun }));
    for (const g of after.filter((r) => r.attempt >= 2)) {
      assert.notEqual(g.holder, bName, JSON.stringify(after));
    }
    // Every one of the three held a share of this scan (the dead one's was taken over).
    const holders = new Set(
      before.filter((r) => r.run === run && r.state === "running").map((r) => r.holder),
    );
    assert.equal(holders.size, 3, JSON.stringify(before));
    assert.ok(holders.has(bName), JSON.stringify({ bName, before }));
  }, 3);
});

Deno.test("a share lost MAX_ATTEMPTS times fails its query as RUNTIME_ERROR naming the share, not as a bug; the cause is in the coordinator's log only", async () => {
  await using pg = await startPostgres();
  // 2 x 600k records, about 50 MB: shares long enough to be seen held.
  const lines = 600_000;
  await withCluster(pg, lines, async (cluster) => {
    const { a, b, token, homes } = cluster;
    const bName = await shareName(b);
    const bPid = await pidOf(homes[1]!);
    // What a worker's failure may say (its own files): never the client's to read.
    const cause = "could not open '/srv/trawl-private/shard.bin'";
    // B is paused (SIGSTOP) while it holds a share of the query, seen holding it again while
    // paused (else let go, and a new query tried); that share is then marked as lost for the
    // last time (its attempts used up, its lease lapsed): the next claim fails it.
    let id: string | undefined;
    for (let tries = 1; id === undefined; tries++) {
      assert.ok(tries <= 5, "B's share ended before each pause");
      const tried = await submit(a, token, SCRIPTS[0]!);
      const rows = await untilShares(
        cluster.db,
        "B held no share",
        (rows) => rows.some((r) => r.state === "running" && r.holder === bName),
      );
      const seen = rows.find((r) => r.state === "running" && r.holder === bName)!;
      await pause(cluster.db, bPid);
      const lost = await cluster.db.sql`
        UPDATE trawl_shares SET attempt = ${MAX_ATTEMPTS}, error = ${cause},
          lease_until = now() - interval '1 second'
        WHERE run = ${seen.run} AND share = ${seen.share} AND attempt = ${seen.attempt}
          AND state = 'running' AND holder = ${bName}
        RETURNING share`;
      if (lost.length === 1) id = tried;
      else {
        Deno.kill(bPid, "SIGCONT");
        await finalState(a, token, tried);
      }
    }
    try {
      const end = await finalState(a, token, id);
      assert.equal(end.state, "FAILED", JSON.stringify(end));
      const error = end.error as { code: string; message: string };
      assert.equal(error.code, "RUNTIME_ERROR");
      assert.match(error.message, /^share \d+ of the query's scan was lost 3 times \(/);
      assert.doesNotMatch(error.message, /bug|trawl-private/);
      await until(
        "the coordinator's log does not name the cause",
        () => Promise.resolve(a.stderr.join("\n")),
        (log) => log.includes(cause),
      );
    } finally {
      Deno.kill(bPid, "SIGCONT");
    }
    // B, let go, answers late (refused) and both go on: the next scan succeeds.
    const again = await answer(a, token, SCRIPTS[0]!);
    assert.deepEqual(again.rows, [{ rows: 2 * lines }]);
  });
});

Deno.test("the shares table: a lapsed lease is claimed again, the late answer of the attempt before is ignored, a share lost MAX_ATTEMPTS times fails naming it, a cancel ends a holder's lease", async () => {
  await using pg = await startPostgres();
  const storage = await openPgStorage(await pg.newDatabase(), { connections: 2 });
  const one = new PgShares(storage, "server-one", 60_000);
  const two = new PgShares(storage, "server-two", 60_000);
  const heard: string[] = [];
  let unlisten: (() => Promise<void>) | undefined;
  try {
    await one.make();
    unlisten = await one.listen(
      (s) => heard.push("run" in s ? `${s.kind}:${s.run}` : s.kind),
      () => {},
    );
    const lapse = (run: string, share: number) =>
      storage.sql`UPDATE trawl_shares SET lease_until = now() - interval '1 second'
        WHERE run = ${run} AND share = ${share}`;
    const task = (n: number) => ({ part: "{}", task: clone({ n }) });
    await one.queue("r1", [task(0), task(1)]);
    const first = (await one.claim())!;
    assert.deepEqual([first.share, first.attempt, first.task], [0, 1, { n: 0 }]);
    const other = (await two.claim())!;
    assert.deepEqual([other.share, other.attempt], [1, 1]);
    assert.equal(await two.claim(), null);
    // What a holder read, told with its renewal, is what the coordinator's progress reads.
    assert.deepEqual(await two.renew([other], [1234]), []);
    const read = await one.consumed("r1", [0, 1]);
    assert.deepEqual([read.get(0), read.get(1)], [0, 1234]);
    // Share 0's holder is unheard of: its lease lapses and the other server takes it.
    await lapse("r1", 0);
    const again = (await two.claim())!;
    assert.deepEqual([again.share, again.attempt], [0, 2]);
    assert.equal(await one.answer(first, "done", clone("late")), false);
    assert.deepEqual(await one.renew([first]), [first]);
    const answer = frames([clone({ kind: "done" })]);
    assert.equal(await two.answer(again, "done", answer), true);
    const [ended] = await one.ended("r1", [0, 1]);
    assert.equal(ended!.state, "done");
    assert.deepEqual(unframe(ended!.result!), [{ kind: "done" }]);
    // Taken once: the result is not kept after the coordinator read it.
    assert.deepEqual(await one.ended("r1", [0]), [{
      share: 0,
      state: "done",
      result: null,
      error: null,
    }]);
    // Share 1 lost twice more: the next claim fails it instead.
    await lapse("r1", 1);
    assert.equal((await one.claim())!.attempt, 2);
    await lapse("r1", 1);
    assert.equal((await one.claim())!.attempt, 3);
    await lapse("r1", 1);
    assert.equal(await two.claim(), null);
    const [failed] = await one.ended("r1", [1]);
    assert.equal(failed!.state, "failed");
    assert.match(failed!.error!, /^share 1 of the query's scan was lost 3 times .*server-one/);
    // A worker failing through no fault of the query queues its share again, counted; the
    // last failure is named when attempts run out.
    await one.queue("r7", [task(0)]);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claim = (await two.claim())!;
      assert.deepEqual([claim.run, claim.attempt], ["r7", attempt]);
      assert.equal(await two.again(claim, `crash ${attempt}`), true);
      assert.equal(await two.again(claim, "twice"), false);
    }
    assert.equal(await two.claim(), null);
    const [crashed] = await one.ended("r7", [0]);
    assert.equal(crashed!.state, "failed");
    assert.match(
      crashed!.error!,
      /^share 0 of the query's scan was lost 3 times \(last: crash 3\)/,
    );
    // A run whose coordinator is unheard of for a lease: not claimed, and its holder loses it
    // (stopping its worker cancels the share, naming why).
    await one.queue("r3", [task(0), task(1)]);
    const orphan = (await two.claim())!;
    const abandon = () =>
      storage.sql`UPDATE trawl_shares SET run_seen = now() - interval '2 minutes' WHERE run = 'r3'`;
    await abandon();
    assert.equal(await one.claim(), null);
    assert.deepEqual(await two.renew([orphan]), [orphan]);
    await two.stopped(orphan);
    const [gone] = await storage.sql<[{ state: string; error: string }]>`
      SELECT state, error FROM trawl_shares WHERE run = 'r3' AND share = 0`;
    assert.deepEqual({ ...gone }, { state: "cancelled", error: ABANDONED });
    // Its coordinator was only unheard (its connection timing out for a lease on a machine at
    // load 35): asking for the share's answer, it is alive after all, and the share is queued
    // again, its attempt counted, rather than handed back cancelled (which failed its query as
    // an internal error). The run's other share, queued, is claimed once it says so again.
    assert.deepEqual(await one.ended("r3", [0]), []);
    const requeued = (await one.claim())!;
    assert.deepEqual(
      [requeued.run, requeued.share, requeued.attempt, requeued.task],
      ["r3", 0, 2, { n: 0 }],
    );
    await one.seen(["r3"]);
    assert.deepEqual([(await one.claim())!.share], [1]);
    // Abandoned once more, and again: the next claim fails it, naming why.
    for (const attempt of [2, 3]) {
      const held = attempt === 2 ? requeued : (await two.claim())!;
      assert.deepEqual([held.share, held.attempt], [0, attempt]);
      await abandon();
      assert.deepEqual(await two.renew([held]), [held]);
      await two.stopped(held);
      assert.deepEqual(await one.ended("r3", [0]), []);
    }
    assert.equal(await two.claim(), null);
    const [lost] = await one.ended("r3", [0]);
    assert.equal(lost!.state, "failed");
    assert.match(lost!.error!, /^share 0 of the query's scan was lost 3 times \(last: its coord/);
    // A share its coordinator cancelled is never queued again, whatever its error said.
    await one.queue("r5", [task(0)]);
    const doomed = (await two.claim())!;
    await storage.sql`UPDATE trawl_shares SET error = ${ABANDONED} WHERE run = 'r5'`;
    assert.equal(await one.cancel("r5", [0]), 1);
    await two.stopped(doomed);
    assert.deepEqual((await one.ended("r5", [0])).map((e) => e.state), ["cancelled"]);
    // A server stopping: a share it runs for another is queued again, its attempt not counted;
    // the shares of its own runs are cancelled.
    await storage.sql`UPDATE trawl_shares SET state = 'done' WHERE run IN ('r1', 'r3', 'r5')`;
    await one.queue("r4", [task(0)]);
    const running = (await two.claim())!;
    assert.equal(running.run, "r4");
    await two.release();
    const [back] = await storage.sql<[{ state: string; attempt: number }]>`
      SELECT state, attempt FROM trawl_shares WHERE run = 'r4'`;
    assert.deepEqual({ ...back }, { state: "queued", attempt: 0 });
    await one.release();
    const [stopped] = await one.ended("r4", [0]);
    assert.deepEqual([stopped!.state, stopped!.error], ["cancelled", "its coordinator stopped"]);
    // A cancel: the holder's lease is no longer renewed and its answer is not written.
    await one.queue("r2", [task(0)]);
    const held = (await two.claim())!;
    assert.equal(await one.cancel("r2", [0]), 1);
    assert.deepEqual(await two.renew([held]), [held]);
    assert.equal(await two.answer(held, "done", answer), false);
    const deadline = Date.now() + 30_000;
    while (!heard.includes("cancel:r2") && Date.now() < deadline) await sleep(10);
    assert.ok(heard.includes("new") && heard.includes("done:r1"), JSON.stringify(heard));
    assert.ok(heard.includes("cancel:r2"), JSON.stringify(heard));
  } finally {
    await unlisten?.();
    await storage.close();
  }
});

Deno.test("the coordinator killed mid-scan: the query is FAILED through the other server, which runs the next scan alone", async () => {
  await using pg = await startPostgres();
  const lines = 600_000;
  await withCluster(pg, lines, async (cluster) => {
    const { a, b, token } = cluster;
    const id = await submit(a, token, SCRIPTS[0]!);
    await untilShares(
      cluster.db,
      "no share of the scan ran",
      (rows) => rows.some((r) => r.state !== "queued"),
    );
    await a.stop("SIGKILL");
    const end = await finalState(b, token, id);
    assert.equal(end.state, "FAILED", JSON.stringify(end));
    // Nothing of the dead coordinator's run stays running on B.
    await untilShares(
      cluster.db,
      "a share of the dead run still runs",
      (rows) =>
        // (The dead coordinator's own share stays as it left it: nobody waits for it.)
        rows.every((r) => r.state !== "running" || r.holder === r.coordinator),
    );
    // B, alone now, spreads its own scan and claims every share itself.
    const alone = await answer(b, token, SCRIPTS[0]!);
    assert.deepEqual(alone.rows, [{ rows: 2 * lines }]);
  });
});

Deno.test("the database stopped mid-scan and started again: the scan's shares run again and the query SUCCEEDS with the right count", async () => {
  await using pg = await startPostgres();
  const lines = 600_000;
  await withCluster(pg, lines, async (cluster) => {
    const { a, token } = cluster;
    const id = await submit(a, token, SCRIPTS[0]!);
    await untilShares(
      cluster.db,
      "no share of the scan ran",
      (rows) => rows.some((r) => r.state === "running"),
    );
    await cluster.db.close();
    await pg.stop();
    await pg.start();
    cluster.db = await openPgStorage(cluster.url, { connections: 1 });
    const end = await finalState(a, token, id);
    assert.equal(
      end.state,
      "SUCCEEDED",
      `${JSON.stringify(end)}\n${a.stderr.slice(-30).join("\n")}`,
    );
    const result = await (await api(a, token, `/queries/${id}/result`)).json();
    assert.deepEqual(result, [{ rows: 2 * lines }]);
  });
});
