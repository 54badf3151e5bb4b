/**
 * The one warning a source gives for the records it skipped: how many, and where the first
 * was. It carries its tally, so that the tallies of the workers that read shares of one source
 * become one warning again (engine/exec/parallel/parallel_aggregate.ts), as one thread gives.
 *
 *   ctx.warn(skipWarning({ kind: "PARSE", count: 3, first: { uri: "/a.log" } }));
 */

import type { Warning } from "../contracts/datastore.ts";

export interface SkipTally {
  /** The source that skipped: its records and message. */
  readonly kind: "PARSE" | "READ_JSON";
  readonly count: number;
  /**
   * The first record skipped: its file and, for JSON lines, its line (1-based, counted from
   * the start of what was read: a worker's share counts from its first line), or a description
   * of where it was (`element 3`, `the text after the array`).
   */
  readonly first: { readonly uri: string; readonly line?: number; readonly where?: string };
}

export type TallyWarning = Warning & { readonly tally: SkipTally };

export function skipWarning(tally: SkipTally): TallyWarning {
  const { kind, count, first } = tally;
  const message = kind === "PARSE"
    ? `PARSE skipped ${
      count === 1 ? "1 record that does" : `${count} records that do`
    } not match the pattern (the first in '${first.uri}')`
    : `READ_JSON skipped ${
      count === 1
        ? "1 record that is not a JSON object"
        : `${count} records that are not JSON objects`
    } (the first: ${
      first.line !== undefined
        ? `line ${first.line} of '${first.uri}'`
        : first.where === "after"
        ? `the text after the array in '${first.uri}'`
        : first.where === "unterminated"
        ? `the unterminated array in '${first.uri}'`
        : `${first.where} of '${first.uri}'`
    })`;
  return { level: "WARN", message, tally };
}
