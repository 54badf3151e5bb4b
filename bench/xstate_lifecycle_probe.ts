// deno-lint-ignore-file no-console
/**
 * The actors' share of a trivial query, without HTTP or the engine: the supervisor admits a
 * query whose stand-in engine yields one row, the query runs to SUCCEEDED, is answered (ANSWERED)
 * and dropped, 16 at a time. Prints CPU µs per query:
 * `deno run -A bench/xstate_lifecycle_probe.ts [--n 20000]`.
 */
import process from "node:process";
import { startSupervisor } from "../actors/supervisor.ts";
import { isFinished, queryStatus, topState, withEngine } from "../actors/query_machine.ts";
import { ResultStore } from "../actors/result_store.ts";
import { ALICE, fakeEngine, PLAN } from "../actors/test_support.ts";
import { memoryLogger } from "../home/log.ts";
import { waitFor } from "xstate";

const i = Deno.args.indexOf("--n");
const N = i >= 0 ? Number(Deno.args[i + 1]) : 20_000;
const supervisor = startSupervisor(
  { maxRunning: 64, maxQueued: 100_000, retentionMs: 60_000, expiredMemoryMs: 86_400_000 },
  { log: memoryLogger() },
);
// startSupervisor has no queryLogic option: set the stand-in engine on the context.
(supervisor.getSnapshot().context as { queryLogic?: unknown }).queryLogic = withEngine(
  fakeEngine({ batches: [[{ a: 1 }]] }),
);
let next = 0;
const times = { submit: 0, answered: 0 };
async function one() {
  const queryId = `q${next++}`;
  const t0 = performance.now();
  supervisor.send({
    type: "SUBMIT",
    input: {
      queryId,
      owner: ALICE,
      plan: PLAN,
      store: new ResultStore(queryId, { memoryBytes: 1 << 20, spillDir: "/nonexistent" }),
      serverTimeZone: "UTC",
    },
  });
  times.submit += performance.now() - t0;
  const ref = supervisor.getSnapshot().context.queries.get(queryId)!.ref;
  await waitFor(ref, (s) => isFinished(topState(s.value)), { timeout: Infinity });
  const t1 = performance.now();
  supervisor.send({ type: "ANSWERED", queryId, status: queryStatus(ref.getSnapshot()) });
  times.answered += performance.now() - t1;
}
async function run(n: number) {
  let started = 0;
  const worker = async () => {
    while (started++ < n) await one();
  };
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: 16 }, worker));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}
await run(2000);
times.submit = times.answered = 0;
console.log(`query lifecycle in the actors: ${(await run(N)).toFixed(1)} CPU µs/query`);
console.log(
  `  of which SUBMIT ${(times.submit * 1000 / N).toFixed(1)} µs, ANSWERED ${
    (times.answered * 1000 / N).toFixed(1)
  } µs (wall, synchronous part)`,
);
supervisor.stop();
