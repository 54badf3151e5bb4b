/**
 * Each user's share of the results the server holds: how many (`query.maxResultsPerUser`:
 * queued, running, or finished and kept for their retention) and how many bytes, in memory and
 * on disk (`query.maxResultBytesPerUser`). A query past the count is refused when submitted
 * (the route answers 429); a result that would grow past the bytes fails its query, and what it
 * had stored goes at once.
 *
 * It also keeps the server's pool of result bytes held in memory, all users together
 * (`query.resultMemoryTotalBytes`): a result's segments stay in memory while the pool has room
 * (and the result is under its own `query.resultMemoryBytes`), the others go to its spill file.
 * Without the pool, every result kept for its retention held up to its own limit in memory, and
 * the server's memory grew with the number of results it held.
 *
 *   const opened = quota.open("alice");
 *   if (!opened.ok) refuse(opened.message);
 *   const store = new ResultStore(id, { ..., account: opened.account });
 */

import { QueryError } from "../engine/mod.ts";
import { formatByteSize } from "../home/byte_size.ts";

export interface ResultQuotaLimits {
  readonly maxResults: number;
  readonly maxBytes: number;
  /** The bytes of all results kept in memory at once (none: no pool). */
  readonly memoryBytes?: number | undefined;
}

/** One result's account: charged as it grows, closed when it is dropped. */
export interface ResultAccount {
  /** Adds bytes; throws a QueryError (MEMORY_LIMIT) when the owner's results would pass the limit. */
  charge(bytes: number): void;
  /**
   * Whether `bytes` more of the result may stay in memory: taken from the server's pool if so
   * (given back by `close`), else they go to disk.
   */
  keep(bytes: number): boolean;
  /** Gives back to the pool `bytes` that `keep` took and that are no longer held. */
  unkeep(bytes: number): void;
  /** Gives back the result's bytes and its place in the count; a second call does nothing. */
  close(): void;
}

export type QuotaOpening =
  | { readonly ok: true; readonly account: ResultAccount }
  | { readonly ok: false; readonly message: string };

interface Usage {
  results: number;
  bytes: number;
}

export class ResultQuota {
  readonly #users = new Map<string, Usage>();
  #inMemory = 0;

  constructor(readonly limits: ResultQuotaLimits) {}

  /** The bytes of results held in memory now, all users together. */
  get inMemory(): number {
    return this.#inMemory;
  }

  /** What `owner`'s results take now. */
  usage(owner: string): Readonly<Usage> {
    return this.#users.get(owner) ?? { results: 0, bytes: 0 };
  }

  /** An account for a new result of `owner`, or why there may be none. */
  open(owner: string): QuotaOpening {
    const usage = this.#users.get(owner) ?? { results: 0, bytes: 0 };
    const { maxResults, maxBytes } = this.limits;
    if (usage.results >= maxResults) {
      return {
        ok: false,
        message: `you hold ${usage.results} query results, the most one user may ` +
          `(query.maxResultsPerUser = ${maxResults}); DELETE the ones you have read, or wait ` +
          `for their retention to end`,
      };
    }
    usage.results++;
    this.#users.set(owner, usage);
    let charged = 0;
    let kept = 0;
    let open = true;
    const pool = this.limits.memoryBytes ?? Infinity;
    return {
      ok: true,
      account: {
        charge: (bytes) => {
          if (!open) return;
          if (usage.bytes + bytes > maxBytes) {
            throw new QueryError({
              code: "MEMORY_LIMIT",
              message:
                `the query results of user '${owner}' would take more than ${
                  formatByteSize(maxBytes)
                } (query.maxResultBytesPerUser); DELETE results you have read, or ask for ` +
                `fewer rows (filter, limit)`,
            });
          }
          usage.bytes += bytes;
          charged += bytes;
        },
        keep: (bytes) => {
          if (!open || this.#inMemory + bytes > pool) return false;
          this.#inMemory += bytes;
          kept += bytes;
          return true;
        },
        unkeep: (bytes) => {
          if (!open) return;
          const back = Math.min(bytes, kept);
          this.#inMemory -= back;
          kept -= back;
        },
        close: () => {
          if (!open) return;
          open = false;
          this.#inMemory -= kept;
          usage.bytes -= charged;
          usage.results--;
          if (usage.results === 0) this.#users.delete(owner);
        },
      },
    };
  }
}
