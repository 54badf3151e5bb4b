/**
 * Sources whose fields are known only from the data (READ_JSON, READ_CSV, READ_W3C, READ_ZEEK)
 * give null for a field no record has, as documented; a misspelt name would go unnoticed. This
 * watches the fields a query reads and warns, once the source is done, about each one that had
 * a value in none of the records read:
 *
 *   READ_JSON: field 'stauts' was in none of the 120 records read (it is null in every row)
 */

import type { Row } from "../values.ts";
import type { BatchStream, ExecContext } from "./context.ts";

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
): BatchStream {
  if (fields === null || fields.length === 0) {
    yield* open(keep);
    return;
  }
  const missing = [...fields];
  let records = 0;
  const observe = (row: Row) => {
    records++;
    // No allocation per row: a field found leaves the list, which soon runs empty.
    for (let i = missing.length - 1; i >= 0; i--) {
      const v = row[missing[i]];
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
  if (records === 0) return;
  for (const f of missing) {
    ctx.warn({
      level: "WARN",
      message: `${source}: field '${f}' was in none of the ${records} ${
        records === 1 ? "record" : "records"
      } read (it is null in every row)`,
    });
  }
}
