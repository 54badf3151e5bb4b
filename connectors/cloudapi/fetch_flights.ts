/**
 * Single-flight fetches: while one query fetches a store's hour (or a suite log's content), a
 * second query that needs it waits for that fetch instead of sending the same requests again,
 * then reads the file. Built once in main.ts and shared by every query.
 */

export class FetchFlights {
  #flights = new Map<string, Promise<void>>();

  /**
   * Runs `work` as the fetch of `key`, or waits for the one under way (until `signal`, this
   * query's, aborts). `work` must check by itself whether the fetch is still due (an earlier
   * flight may just have done it). When a flight this call only waited for failed for a reason
   * of its own query (it was cancelled), this call runs `work` itself: `ownFailure` tells such
   * failures from the provider's, which every waiting query shares.
   */
  async run(
    key: string,
    work: () => Promise<void>,
    options: { signal: AbortSignal; ownFailure: (e: unknown) => boolean },
  ): Promise<void> {
    const running = this.#flights.get(key);
    if (running) {
      try {
        return await abortable(running, options.signal);
      } catch (e) {
        if (options.signal.aborted || !options.ownFailure(e)) throw e;
      }
      return this.run(key, work, { ...options, ownFailure: () => false });
    }
    const flight = work().finally(() => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    });
    this.#flights.set(key, flight);
    return await flight;
  }

  /** Keys of the fetches under way (tests). */
  get size(): number {
    return this.#flights.size;
  }
}

/** `p`, or the signal's reason when it aborts first. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
