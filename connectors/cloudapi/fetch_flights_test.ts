import assert from "node:assert/strict";
import { FetchFlights } from "./fetch_flights.ts";
import { CloudRequestError } from "./cloud_request.ts";
import { sleep } from "../../engine/util/sleep.ts";

const never = new AbortController().signal;
const own = (e: unknown) => !(e instanceof CloudRequestError);

Deno.test("FetchFlights runs one fetch per key; a second caller waits for it", async () => {
  const flights = new FetchFlights();
  let runs = 0;
  const work = async () => {
    runs++;
    await sleep(20);
  };
  await Promise.all([
    flights.run("h", work, { signal: never, ownFailure: own }),
    flights.run("h", work, { signal: never, ownFailure: own }),
  ]);
  assert.equal(runs, 1);
  assert.equal(flights.size, 0, "forgotten once done");
});

Deno.test("FetchFlights shares a provider failure but retries after another query was cancelled", async () => {
  const flights = new FetchFlights();
  const refused = flights.run("a", () => Promise.reject(new CloudRequestError("503")), {
    signal: never,
    ownFailure: own,
  });
  const waiter = flights.run("a", () => Promise.resolve(), { signal: never, ownFailure: own });
  await assert.rejects(refused, CloudRequestError);
  await assert.rejects(waiter, CloudRequestError, "the provider's failure is everyone's");

  let mine = 0;
  const cancelled = flights.run("b", () => Promise.reject(new DOMException("stop", "AbortError")), {
    signal: never,
    ownFailure: own,
  });
  const other = flights.run("b", () => Promise.resolve(void mine++), {
    signal: never,
    ownFailure: own,
  });
  await assert.rejects(cancelled);
  await other;
  assert.equal(mine, 1, "the waiter fetched by itself");
});

Deno.test("FetchFlights stops waiting when the waiting query is cancelled", async () => {
  const flights = new FetchFlights();
  let finish!: () => void;
  const first = flights.run("h", () => new Promise<void>((r) => finish = r), {
    signal: never,
    ownFailure: own,
  });
  const stop = new AbortController();
  const waiting = flights.run("h", () => Promise.resolve(), {
    signal: stop.signal,
    ownFailure: own,
  });
  stop.abort(new Error("cancelled"));
  await assert.rejects(waiting, /cancelled/);
  finish();
  await first;
});
