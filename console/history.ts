/**
 * The person's own history of queries, kept in this browser (localStorage, per user) so that it
 * outlives the server's retention of results (`query.retention`): what ran (the script and the
 * folder it ran in, or the stored script and its arguments), when, how long, how many rows, how
 * it ended. "Run again" runs it anew.
 */

export interface HistoryEntry {
  readonly queryId: string;
  /** Milliseconds since the epoch, as the browser saw the submission. */
  readonly submitted: number;
  /** A script text run in `workDir`... */
  readonly script?: string;
  readonly workDir?: string;
  /** ...or a stored script run with arguments. */
  readonly stored?: { readonly path: string; readonly args: Record<string, string> };
  readonly state?: string;
  /** When it was seen to finish (milliseconds since the epoch). */
  readonly finished?: number;
  readonly rows?: number;
}

/** How many entries are kept: the oldest go first. */
export const HISTORY_SIZE = 200;

export class QueryHistory {
  readonly #key: string;
  readonly #listeners = new Set<() => void>();

  constructor(user: string) {
    this.#key = `trawl.history.${user}`;
  }

  list(): HistoryEntry[] {
    try {
      const stored = JSON.parse(localStorage.getItem(this.#key) ?? "[]");
      return Array.isArray(stored) ? stored as HistoryEntry[] : [];
    } catch {
      return [];
    }
  }

  get(queryId: string): HistoryEntry | undefined {
    return this.list().find((e) => e.queryId === queryId);
  }

  add(entry: HistoryEntry): void {
    this.#write([entry, ...this.list().filter((e) => e.queryId !== entry.queryId)]);
  }

  /** Adds to what is known of a query this browser submitted (others are not recorded). */
  update(queryId: string, patch: Partial<HistoryEntry>): void {
    const list = this.list();
    const at = list.findIndex((e) => e.queryId === queryId);
    if (at < 0) return;
    const before = list[at]!;
    const after = { ...before, ...patch };
    if (JSON.stringify(before) === JSON.stringify(after)) return;
    list[at] = after;
    this.#write(list);
  }

  onChange(listener: () => void): void {
    this.#listeners.add(listener);
  }

  #write(list: HistoryEntry[]): void {
    try {
      localStorage.setItem(this.#key, JSON.stringify(list.slice(0, HISTORY_SIZE)));
    } catch {
      // storage full or refused: the history is a convenience
    }
    this.#listeners.forEach((l) => l());
  }
}
