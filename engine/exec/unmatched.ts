/**
 * The records a pattern did not match: counted, and the first few kept (file, line, text) for
 * the warning, so that a pattern that quietly drops part of a file shows what it dropped:
 *
 *   PARSE skipped 3 records that do not match the pattern (the first in '/shared/a.log'):
 *   line 2 "Connection closed by 203.0.113.77 port 52144 [preauth]", line 7 "…", …
 */

import type { Warning } from "../datastore.ts";

/** How many unmatched records a warning shows. */
export const SHOWN_UNMATCHED = 3;
/** How much of an unmatched record's text a warning shows. */
export const SHOWN_CHARS = 120;

export interface UnmatchedSample {
  readonly uri: string;
  readonly line: number;
  readonly text: string;
}

/** `text` cut to SHOWN_CHARS characters (an ellipsis marks the cut), as a JSON string. */
export function shownText(text: string): string {
  const cut = text.length > SHOWN_CHARS ? text.slice(0, SHOWN_CHARS - 1) + "…" : text;
  return JSON.stringify(cut);
}

export class UnmatchedRecords {
  count = 0;
  /** The file of the first unmatched record. */
  firstUri = "";
  readonly samples: UnmatchedSample[] = [];

  add(uri: string, line: number, text: string): void {
    if (this.count++ === 0) this.firstUri = uri;
    if (this.samples.length < SHOWN_UNMATCHED) this.samples.push({ uri, line, text });
  }

  /** Counts records whose line and text are not known (they are not shown). */
  addUnseen(uri: string, n: number): void {
    if (n <= 0) return;
    if (this.count === 0) this.firstUri = uri;
    this.count += n;
  }

  /** The warning of `source` (PARSE), or null when every record matched. */
  warning(source: string): Warning | null {
    if (this.count === 0) return null;
    const what = this.count === 1 ? "1 record that does" : `${this.count} records that do`;
    let message =
      `${source} skipped ${what} not match the pattern (the first in '${this.firstUri}')`;
    if (this.samples.length > 0) {
      let uri = this.firstUri;
      const shown = this.samples.map((s) => {
        const where = s.uri === uri ? "" : `'${s.uri}' `;
        uri = s.uri;
        return `${where}line ${s.line} ${shownText(s.text)}`;
      });
      const more = this.count > this.samples.length ? ", …" : "";
      message += `: ${shown.join(", ")}${more}`;
    }
    return { level: "WARN", message };
  }
}
