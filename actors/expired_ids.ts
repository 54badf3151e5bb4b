/**
 * Ids of dropped queries, remembered for a while (query.expiredMemory, 24 h by default) so that
 * they answer 410 rather than 404. Every answered synchronous query adds one, so there may be
 * millions: the registry is updated in place and forgets from the oldest end, which keeps each
 * drop O(1). (The supervisor used to copy and scan a Map per drop, which made the synchronous
 * API slower with every request served.) At most `maxIds` are kept (the newest): at a thousand
 * synchronous queries a second, a day's memory would be 86 million ids, gigabytes of heap; an id
 * forgotten early answers 404.
 */

/** The most ids remembered: about 15 MB of heap (a server stopping keeps as many). */
export const MAX_EXPIRED_IDS = 100_000;

interface Entry {
  readonly owner: string;
  readonly at: number;
}

export class ExpiredIds {
  /** Insertion order is drop order, and times only grow: the oldest entries come first. */
  readonly #entries = new Map<string, Entry>();

  constructor(readonly memoryMs: number, readonly maxIds = MAX_EXPIRED_IDS) {}

  /** How many ids are remembered (some may be past their memory until the next `remember`). */
  get size(): number {
    return this.#entries.size;
  }

  /** Remembers that `queryId` of `owner` was dropped at `now`, and forgets ids past memory. */
  remember(queryId: string, owner: string, now: number): void {
    for (const [id, entry] of this.#entries) {
      if (now - entry.at <= this.memoryMs) break;
      this.#entries.delete(id);
    }
    // Delete first so that a re-used id moves to the young end and the order stays by time.
    this.#entries.delete(queryId);
    this.#entries.set(queryId, { owner, at: now });
    if (this.#entries.size > this.maxIds) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  /** Every id remembered, oldest first: `[id, owner, dropped at]`. */
  *entries(): Iterable<readonly [string, string, number]> {
    for (const [id, entry] of this.#entries) yield [id, entry.owner, entry.at];
  }

  /** The owner of an id dropped within the memory, or undefined. */
  ownerOf(queryId: string, now: number): string | undefined {
    const entry = this.#entries.get(queryId);
    return entry && now - entry.at <= this.memoryMs ? entry.owner : undefined;
  }
}
