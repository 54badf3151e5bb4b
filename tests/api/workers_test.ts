import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { finished, startQuery, writeBigLog } from "./client.ts";
import { sleep } from "../../engine/util/sleep.ts";

const GROUPED =
  "PARSE(pattern: '''INT:n LD:host ' ' WORD:method LD EOL''', src: '/shared/big.log')" +
  " | filter(n % 7 = 0) | select(method, n % 13 as k, count(*) as hits, sum(n) as total," +
  " min(n) as lo, max(n) as hi) | group(method, k) | sort(k)";
const ROWS = "PARSE(pattern: '''INT:n LD EOL''', src: '/shared/big.log') | filter(n % 50000 = 0)";

async function run(workers: string, script: string): Promise<unknown> {
  await using s = await startTestServer({ "query.workers": workers });
  await writeBigLog(s, 400_000);
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/plain" },
    body: script,
  });
  assert.equal(res.status, 200);
  return await res.json();
}

Deno.test("the API answers the same on two scan workers as on one thread", async () => {
  const groups = await run("2", GROUPED) as { k: number; hits: number; lo: number }[];
  assert.deepEqual(groups, await run("1", GROUPED));
  // 13 groups, each with its own count and first row: a merge that mixed them up would show.
  assert.deepEqual(groups.map((g) => g.k), Array.from({ length: 13 }, (_, k) => k));
  assert.deepEqual(
    groups.map((g) => g.lo),
    Array.from({ length: 13 }, (_, k) => 7 * ((k * 2) % 13)),
  );
  const rows = await run("2", ROWS);
  assert.deepEqual(rows, await run("1", ROWS));
  assert.equal((rows as unknown[]).length, 8);
});

Deno.test("a DELETE cancels a query whose scan runs on workers", async () => {
  await using s = await startTestServer({ "query.workers": "2" });
  const log = await writeBigLog(s, 1_500_000);
  const id = await startQuery(s, ROWS.replace("50000", "3"));
  for (let i = 0; i < 100; i++) {
    const st = await (await s.fetch("alice", `/API/v1.0/queries/${id}`)).json();
    if (st.state === "RUNNING") break;
    await sleep(20);
  }
  const res = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  await res.body?.cancel();
  const done = await finished(s, id);
  assert.equal(done.state, "CANCELLED");
  // Stopped where it was, not run to its end and then called cancelled: part of the log read, and
  // fewer than its 500 000 rows. (Counted, not timed: a busy machine stalls any clock.)
  const size = (await Deno.stat(log)).size;
  assert.ok(done.stats.bytesRead < size, `${done.stats.bytesRead} of ${size} bytes read`);
  assert.ok(done.stats.rowsOut < 500_000, `${done.stats.rowsOut} rows`);
});

/** The nice values of this process's threads named like Deno's Web Workers, and of the main one. */
function threadNices(): { workers: number[]; main: number } {
  const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  const workers: number[] = [];
  for (const t of Deno.readDirSync("/proc/self/task")) {
    const comm = Deno.readTextFileSync(`/proc/self/task/${t.name}/comm`).trim();
    if (comm.startsWith("worker-")) {
      workers.push(niceOf(Deno.readTextFileSync(`/proc/self/task/${t.name}/stat`)));
    }
  }
  return { workers, main: niceOf(Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/stat`)) };
}

Deno.test({
  name: "scan workers run below the server's thread (query.workerNice)",
  ignore: Deno.build.os !== "linux",
}, async () => {
  await using s = await startTestServer({ "query.workers": "2", "query.workerNice": "7" });
  await writeBigLog(s, 1_500_000);
  const id = await startQuery(s, ROWS.replace("50000", "3"));
  let seen: number[] = [];
  // A worker's first share loads (and, under `deno test`, type-checks) its module: seconds.
  for (let i = 0; i < 3000 && !seen.includes(7); i++) {
    seen = threadNices().workers;
    await sleep(10);
  }
  assert.ok(seen.includes(7), `worker threads' nice values: ${seen}`);
  assert.equal(threadNices().main, 0, "the server's thread keeps its priority");
  await (await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" })).body?.cancel();
  await finished(s, id);
});
