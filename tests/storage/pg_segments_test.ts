/**
 * Large answers of a distributed scan as segments in shared storage (actors/distributed_scans.ts,
 * home/storage/pg_shares.ts), with two real `main.ts serve` processes on one PostgreSQL and
 * `cluster.shareAnswerBytes` low: every share's answer passes it, is written by its holder as
 * pieces under `cluster/segments/<run>/`, read by the coordinator in share order: the rows are
 * those of one server alone (rows rendered by the workers, groups, sorted rows, a limit that stops
 * the merge early); both servers wrote segments; nothing is left in the storage after. A holder
 * paused (SIGSTOP) mid-write loses its share once its lease lapsed and the share runs again; let go
 * (SIGCONT) while the new attempt runs, it deletes what it wrote itself (before the run ended), and
 * the answer is exact. A holder killed (SIGKILL) mid-write: the answer is exact, and the
 * coordinator deletes the pieces it left. And the pieces themselves: their retention, their
 * deletion by segment and by run.
 */

import assert from "node:assert/strict";
import type { ServerProcess } from "../foundation/server_process.ts";
import { api, finalState, submit } from "../support/server_api.ts";
import { startPostgres } from "../support/postgres.ts";
import {
  type Cluster,
  PATTERN,
  pause,
  pidOf,
  type ShareRow,
  shareRows,
  until,
  withCluster as withServers,
} from "../support/pg_cluster.ts";
import { openPgStorage, type PgStorage } from "../../home/storage/pg_storage.ts";
import { PgShares, SEGMENT_RETENTION_MS, SEGMENTS } from "../../home/storage/pg_shares.ts";

const SOURCE = `PARSE(pattern: '''${PATTERN}''', src: 'file://logs/*.log')`;

const SCRIPTS = [
  // A quarter of the records, rendered by the workers.
  `${SOURCE} | filter(status = 404)`,
  // Many groups: each share's groups are one message larger than the setting.
  `${SOURCE} | select(ip, path, count(*) as n, sum(bytes) as total, max(bytes) as top)
   | group(ip, path) | sort(ip, path)`,
  `${SOURCE} | filter(status = 500) | sort(bytes desc, path, ip)`,
  // Few rows: kept in the share's row, as before.
  `${SOURCE} | select(count(*) as rows)`,
  // The merge stops early: the segments being read are stopped and deleted all the same.
  `${SOURCE} | filter(status = 404) | limit(30)`,
];

const BIG = SCRIPTS[0]!;

/** The query's end and its result as text (the same text from every server). */
async function result(server: ServerProcess, token: string, id: string): Promise<string> {
  const end = await finalState(server, token, id, 900_000);
  assert.equal(end.state, "SUCCEEDED", JSON.stringify(end));
  const res = await api(server, token, `/queries/${id}/result`);
  const text = await res.text();
  assert.equal(res.status, 200, text.slice(0, 500));
  return text;
}

async function answer(server: ServerProcess, token: string, script: string): Promise<string> {
  return await result(server, token, await submit(server, token, script));
}

/** The keys of segments in the storage, as `run/segment/piece`. */
async function segmentKeys(db: PgStorage): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of db.list(SEGMENTS)) keys.push(key.slice(SEGMENTS.length).join("/"));
  return keys;
}

/**
 * Two servers spreading scans and a lone one, not spreading, on a database of its own
 * (tests/support/pg_cluster.ts): every share's answer but a count's passes
 * `cluster.shareAnswerBytes`, 64 KiB, and is written as a segment of 64 KiB pieces.
 */
async function withCluster(
  lines: number,
  body: (c: Cluster & { readonly solo: ServerProcess; readonly bHome: string }) => Promise<void>,
): Promise<void> {
  await using pg = await startPostgres();
  await withServers(
    pg,
    { lines, answerBytes: "64 KiB", solo: true },
    (c) => body({ ...c, solo: c.solo!, bHome: c.homes[1]! }),
  );
}

Deno.test("answers larger than cluster.shareAnswerBytes come back as segments in the storage: the rows of one server alone, both servers wrote some, none left after", async () => {
  await withCluster(150_000, async ({ a, solo, token, db }) => {
    for (const script of SCRIPTS) {
      const alone = await answer(solo, solo.firstToken!, script);
      const spread = await answer(a, token, script);
      assert.ok(JSON.parse(spread).length > 0, script);
      assert.equal(spread, alone, script);
      // The coordinator deletes each segment once read, and its run's once the run ended.
      await until("segments left after the query", () => segmentKeys(db), (k) => k.length === 0);
    }
    const rows = await shareRows(db);
    const runs = [...new Set(rows.map((r) => r.run))];
    assert.equal(runs.length, SCRIPTS.length, JSON.stringify(rows));
    // The limit's shares may be cancelled once it has its rows; the others all answered.
    assert.ok(
      rows.every((r) => r.state === "done" || (r.run === runs[4] && r.state === "cancelled")),
      JSON.stringify(rows),
    );
    // Every share of the first three scripts answered as a segment of one piece or more (the
    // rendered rows in several), none of the count's.
    const of = (k: number) => rows.filter((r) => r.run === runs[k]);
    for (const k of [0, 1, 2]) {
      assert.ok(of(k).every((r) => r.segment !== null && r.pieces! >= 1), JSON.stringify(of(k)));
    }
    assert.ok(of(0).some((r) => r.pieces! > 1), JSON.stringify(of(0)));
    assert.ok(of(3).every((r) => r.segment === null), JSON.stringify(of(3)));
    // Both servers wrote segments.
    const writers = new Set(rows.filter((r) => r.segment !== null).map((r) => r.holder));
    assert.equal(writers.size, 2, `segments written by ${[...writers]}`);
  });
});

Deno.test("a holder paused or killed while it writes a segment: the share runs again, the answer is exact, and nothing it wrote is left", async () => {
  await withCluster(400_000, async ({ a, b, bHome, solo, token, db }) => {
    const alone = await answer(solo, solo.firstToken!, BIG);
    const bPid = await pidOf(bHome);
    /** B (not the coordinator) holds a running share and has written pieces of its segment. */
    const midWrite = async () => {
      const rows = await shareRows(db);
      const keys = await segmentKeys(db);
      const held = rows.find((r) =>
        r.state === "running" && r.holder !== r.coordinator &&
        keys.some((k) => k.startsWith(`${r.run}/s${r.share}a${r.attempt}-`))
      );
      return held ?? null;
    };
    /**
     * B paused (SIGSTOP) mid-write: caught writing, paused until its statements sent are done,
     * and seen mid-write again while paused (it can change nothing then); when it had finished by
     * then, it is let go and caught again. Its share as the table says then.
     */
    const pausedMidWrite = async (): Promise<ShareRow> => {
      for (;;) {
        await until("B never wrote a piece", midWrite, (r) => r !== null);
        await pause(db, bPid);
        const held = await midWrite();
        if (held !== null) return held;
        Deno.kill(bPid, "SIGCONT");
      }
    };

    // Paused mid-write: its lease lapses and A claims the share again; let go then, while A runs
    // it, B finds the share no longer its own and deletes its pieces (the one it was writing
    // too) itself: they are gone while the run is still open (the coordinator deletes what is
    // left of a run only once every share of it ended).
    const paused = await submit(a, token, BIG);
    const stalled = await pausedMidWrite();
    const theShare = (rows: ShareRow[]) =>
      rows.find((r) => r.run === stalled.run && r.share === stalled.share)!;
    try {
      await until(
        "the share was not claimed again",
        () => shareRows(db),
        (rows) => theShare(rows).attempt > stalled.attempt,
      );
    } finally {
      Deno.kill(bPid, "SIGCONT");
    }
    const mine = `${stalled.run}/s${stalled.share}a${stalled.attempt}-`;
    const gone = await until(
      "B left pieces of its superseded attempt",
      async () => {
        const keys = (await segmentKeys(db)).filter((k) => k.startsWith(mine));
        return { keys, share: theShare(await shareRows(db)) };
      },
      (seen) => seen.keys.length === 0,
    );
    assert.equal(
      gone.share.state,
      "running",
      `the share's new attempt ended before B deleted its pieces: ${JSON.stringify(gone)}`,
    );
    // B stopped its attempt itself: it found the share no longer its own, or its answer refused.
    const gaveUp = new RegExp(
      `${stalled.run}: (share ${stalled.share} is no longer this server's|the answer of share ${stalled.share} \\(attempt ${stalled.attempt}\\) came late)`,
    );
    await until(
      "B never said it gave its attempt up",
      () => Promise.resolve(b.stderr.join("\n")),
      (t) => gaveUp.test(t),
    );
    assert.equal(await result(a, token, paused), alone);
    const again = theShare(await shareRows(db));
    assert.equal(again.state, "done");
    assert.ok(again.attempt > stalled.attempt, JSON.stringify(again));
    assert.notEqual(again.segment?.split("-")[0], `s${stalled.share}a${stalled.attempt}`);
    await until("segments left after the query", () => segmentKeys(db), (k) => k.length === 0);
    // B is alive, and spreading: the next query's shares are claimed by both again.

    // Killed mid-write: the coordinator deletes what it left once the run ended.
    const killed = await submit(a, token, BIG);
    const lost = await pausedMidWrite();
    assert.equal(lost.run === stalled.run, false);
    await b.stop("SIGKILL");
    assert.equal(await result(a, token, killed), alone);
    const rerun = (await shareRows(db)).find((r) => r.run === lost.run && r.share === lost.share)!;
    assert.equal(rerun.state, "done");
    assert.ok(rerun.attempt > lost.attempt, JSON.stringify(rerun));
    await until("pieces of the killed holder left", () => segmentKeys(db), (k) => k.length === 0);
  });
});

Deno.test("the pieces of a segment: written with a retention, read by their number, deleted by segment and by run", async () => {
  await using pg = await startPostgres();
  const storage = await openPgStorage(await pg.newDatabase(), { connections: 1 });
  try {
    const shares = new PgShares(storage, "server-one", 60_000);
    const bytes = (n: number) => new Uint8Array(n).fill(n % 251);
    await shares.writePiece("r1", "s0a1-x", 0, bytes(10));
    // A piece larger than one chunk of the storage.
    await shares.writePiece("r1", "s0a1-x", 1, bytes(3 << 20));
    await shares.writePiece("r1", "s1a2-y", 0, bytes(5));
    await shares.writePiece("r2", "s0a1-z", 0, bytes(7));
    assert.deepEqual(await shares.readPiece("r1", "s0a1-x", 1), bytes(3 << 20));
    assert.equal(await shares.readPiece("r1", "s0a1-x", 2), null);
    // Each with the retention: the storage drops what nobody deleted.
    const kept = await storage.sql<{ hours: number }[]>`
      SELECT extract(epoch FROM expires_at - now())::float8 / 3600 AS hours FROM trawl_heads
      WHERE key[1] = 'cluster'`;
    assert.equal(kept.length, 4);
    for (const k of kept) assert.ok(k.hours > 23 && k.hours <= 24, JSON.stringify(kept));
    assert.equal(SEGMENT_RETENTION_MS, 24 * 3600_000);
    const keys = async () => {
      const out: string[] = [];
      for await (const key of storage.list(SEGMENTS)) out.push(key.join("/"));
      return out;
    };
    assert.equal(await shares.dropSegments("r1", "s0a1-x"), 2);
    assert.deepEqual(await keys(), [
      "cluster/segments/r1/s1a2-y/0",
      "cluster/segments/r2/s0a1-z/0",
    ]);
    assert.equal(await shares.dropSegments("r1"), 1);
    assert.deepEqual(await keys(), ["cluster/segments/r2/s0a1-z/0"]);
  } finally {
    await storage.close();
  }
});
