/**
 * Sources whose fields are known only from the data (READ_JSON, READ_CSV, READ_W3C, READ_ZEEK)
 * give null for a field no record has, as documented; a misspelt name would go unnoticed. This
 * watches the fields a query reads and warns, once the source is done, about each one that had
 * a value in none of the records read:
 *
 *   READ_JSON: field 'stauts' was in none of the 120 records read (it is null in every row)
 */

import type { Warning } from "../contracts/datastore.ts";
import type { Row } from "../values/values.ts";
import type { BatchStream, ExecContext } from "../plan/context.ts";

/** What a share saw: the records it read and the watched fields none of them had. */
export interface AbsentTally {
  readonly source: string;
  readonly records: number;
  readonly missing: readonly string[];
  /**
   * Names with a `-` that the first records had (`log-status`): a missing `log` and `status`
   * are then most likely that name written without backquotes (read as `log - status`).
   */
  readonly hyphenated?: readonly string[];
}

/** How many first records the names with a `-` are taken from. */
const HYPHEN_LOOK = 16;

/** A share's report to the query's thread, which merges the shares' reports (never shown). */
export type AbsentReport = Warning & { readonly absent: AbsentTally };

/** The warnings for what one thread or the merged shares saw: one per field no record had. */
export function absentWarnings(tally: AbsentTally): Warning[] {
  const { source, records, missing } = tally;
  if (records === 0) return [];
  return missing.map((f) => {
    const whole = tally.hyphenated?.find((h) => h.split("-").includes(f));
    const hint = whole === undefined
      ? ""
      : `; the data has the field '${whole}': write it in backquotes, \`${whole}\` (without ` +
        `them ${whole.split("-").join(" - ")} is a subtraction)`;
    return {
      level: "WARN",
      message: `${source}: field '${f}' was in none of the ${records} ${
        records === 1 ? "record" : "records"
      } read (it is null in every row)${hint}`,
    };
  });
}

/** The tallies of several shares as one: a field is absent only where no share saw it. */
export function mergeAbsent(tallies: readonly AbsentTally[]): AbsentTally[] {
  const bySource = new Map<
    string,
    { records: number; missing: Set<string> | null; hyphenated: Set<string> }
  >();
  for (const t of tallies) {
    const m = bySource.get(t.source);
    if (!m) {
      bySource.set(t.source, {
        records: t.records,
        missing: new Set(t.missing),
        hyphenated: new Set(t.hyphenated),
      });
    } else {
      m.records += t.records;
      for (const f of [...m.missing!]) if (!t.missing.includes(f)) m.missing!.delete(f);
      for (const h of t.hyphenated ?? []) m.hyphenated.add(h);
    }
  }
  return [...bySource].map(([source, m]) => ({
    source,
    records: m.records,
    missing: [...m.missing!],
    ...(m.hyphenated.size > 0 ? { hyphenated: [...m.hyphenated] } : {}),
  }));
}

/**
 * The rows of `open(keep)`, watching `fields` (null: every field, nothing to check). A pushed
 * filter (`keep`) sees every record the source reads, so it watches there; without one, the
 * rows handed out are all the records.
 */
export async function* warnAbsentFields(
  source: string,
  fields: readonly string[] | null,
  keep: ((row: Row) => boolean) | undefined,
  ctx: ExecContext,
  open: (keep: ((row: Row) => boolean) | undefined) => BatchStream,
  /** A worker's share: report the tally for the query's thread to merge, warn of nothing. */
  share = false,
): BatchStream {
  if (fields === null || fields.length === 0) {
    yield* open(keep);
    return;
  }
  const missing = [...fields];
  let records = 0;
  // The names with a `-` of the first records, for the hint of a missing `log` and `status`.
  const hyphenated = new Set<string>();
  const observe = (row: Row) => {
    if (records++ < HYPHEN_LOOK && missing.length > 0) {
      for (const k in row) if (k.includes("-")) hyphenated.add(k);
    }
    // No allocation per row: a field found leaves the list, which soon runs empty.
    for (let i = missing.length - 1; i >= 0; i--) {
      const v = row[missing[i]!];
      if (v !== null && v !== undefined) missing.splice(i, 1);
    }
  };
  const watched = keep === undefined ? undefined : (row: Row) => {
    observe(row);
    return keep(row);
  };
  for await (const batch of open(watched)) {
    if (keep === undefined) { for (const row of batch) observe(row); }
    yield batch;
  }
  const tally: AbsentTally = {
    source,
    records,
    missing,
    ...(hyphenated.size > 0 ? { hyphenated: [...hyphenated] } : {}),
  };
  const report: AbsentReport = { level: "INFO", message: `${source}: fields seen`, absent: tally };
  if (share) ctx.warn(report);
  else for (const w of absentWarnings(tally)) ctx.warn(w);
}
