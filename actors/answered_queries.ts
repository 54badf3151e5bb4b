/**
 * The statuses of answered synchronous queries, kept for the retention period so that a client
 * can read what their warnings say (`Trawl-Query-Id`), without their actor or their result: a
 * server answering a thousand synchronous queries a second would otherwise hold hundreds of
 * thousands of query actors and results, and each user's result limit
 * (`query.maxResultsPerUser`) would start refusing the synchronous API. Updated in place and
 * forgotten from the oldest end (as ExpiredIds), at most `capacity` at a time.
 */

interface Entry {
  readonly owner: string;
  /** The status object as the API shows it (opaque here). */
  readonly status: unknown;
  readonly at: number;
}

/** Statuses kept at most: about 20 MB of status objects. */
export const ANSWERED_CAPACITY = 20_000;

export class AnsweredQueries {
  /** Insertion order is answer order, and times only grow: the oldest entries come first. */
  readonly #entries = new Map<string, Entry>();

  constructor(readonly retentionMs: number, readonly capacity = ANSWERED_CAPACITY) {}

  get size(): number {
    return this.#entries.size;
  }

  /** Keeps the status of `queryId` from `now`; forgets what is past retention or capacity. */
  remember(queryId: string, owner: string, status: unknown, now: number): void {
    for (const [id, entry] of this.#entries) {
      if (now - entry.at <= this.retentionMs && this.#entries.size < this.capacity) break;
      this.#entries.delete(id);
    }
    this.#entries.delete(queryId);
    this.#entries.set(queryId, { owner, status, at: now });
  }

  /** The owner and status of an answered query within the retention, or undefined. */
  get(queryId: string, now: number): { owner: string; status: unknown } | undefined {
    const entry = this.#entries.get(queryId);
    return entry && now - entry.at <= this.retentionMs ? entry : undefined;
  }

  /** Every answered query kept, oldest first: `[id, owner, answered at]`. */
  *entries(): Iterable<readonly [string, string, number]> {
    for (const [id, entry] of this.#entries) yield [id, entry.owner, entry.at];
  }

  /** Forgets an answered query (DELETE); whether it was kept. */
  forget(queryId: string): boolean {
    return this.#entries.delete(queryId);
  }
}
