/**
 * A SUCCEEDED query's result in the storage: PAGE_ITEMS items a page at `queries/r/<id>/<n>`, in
 * a compact lossless form (engine/table/sxt_values.ts), written by the server that ran it and
 * read by any other.
 */

import type { StoredItem } from "../result_store.ts";
import { decodeText, encodeText, pageKey } from "./keys.ts";
import type { SharedResult } from "./records.ts";
import { decodeValue, encodeValue, type Row, type Storage } from "../../engine/mod.ts";

/** Items per page of a shared result. */
export const PAGE_ITEMS = 16_384;
/** Items handed to a result writer at a time when a shared result is read. */
export const READ_BATCH = 1024;

/** What the pages are written from: a local result store. */
export interface ItemSource {
  readonly count: number;
  read(first: number, last: number): AsyncIterable<readonly StoredItem[]>;
}

export class ResultPages {
  constructor(readonly storage: Storage, readonly pageItems = PAGE_ITEMS) {}

  /** Writes `items` as pages that expire after `expireInMs`; where they are. */
  async write(
    queryId: string,
    items: ItemSource,
    columns: readonly string[],
    expireInMs: number,
  ): Promise<SharedResult> {
    const count = items.count;
    let page = 0;
    let pending: StoredItem[] = [];
    const flush = async () => {
      await this.storage.put(pageKey(queryId, page), encodePage(pending, columns), { expireInMs });
      page++;
      pending = [];
    };
    if (count > 0) {
      for await (const batch of items.read(0, count - 1)) {
        for (const item of batch) {
          pending.push(item);
          if (pending.length === this.pageItems) await flush();
        }
      }
      if (pending.length > 0) await flush();
    }
    return { count, pages: page, pageItems: this.pageItems };
  }

  /** Items `first..last` of a shared result, in batches (a page is read when reached). */
  async *read(
    queryId: string,
    result: SharedResult,
    first: number,
    last: number,
  ): AsyncGenerator<readonly StoredItem[]> {
    last = Math.min(last, result.count - 1);
    for (
      let page = Math.floor(first / result.pageItems);
      page <= Math.floor(last / result.pageItems) && page < result.pages;
      page++
    ) {
      const stored = await this.storage.get(pageKey(queryId, page));
      if (!stored) {
        throw new Error(`the stored result of query ${queryId} is gone (freed or expired)`);
      }
      const items = decodePage(stored.value);
      const base = page * result.pageItems;
      const from = Math.max(first, base) - base;
      const to = Math.min(last, base + items.length - 1) - base;
      for (let i = from; i <= to; i += READ_BATCH) {
        yield items.slice(i, Math.min(to, i + READ_BATCH - 1) + 1);
      }
    }
  }

  /** Removes the pages of a result (none when there is none). */
  async drop(queryId: string, result: SharedResult | undefined): Promise<void> {
    if (!result) return;
    for (let page = 0; page < result.pages; page++) {
      await this.storage.delete(pageKey(queryId, page));
    }
  }
}

/** Marks a column a row does not have (encodeValue writes a string `~U` as `~~U`). */
const ABSENT = "~U";

/**
 * One item of a page: a fragment as a JSON string, a row as the array of its values in the
 * page's column order (a column first met in this row is added to `columns`).
 */
function encodeItem(item: StoredItem, columns: string[]): string {
  if (typeof item === "string") return JSON.stringify(item);
  const values: unknown[] = new Array(columns.length).fill(ABSENT);
  for (const name in item) {
    const value = item[name];
    if (value === undefined) continue;
    let at = columns.indexOf(name);
    if (at < 0) {
      at = columns.push(name) - 1;
      values.push(ABSENT);
    }
    values[at] = encodeValue(value);
  }
  return JSON.stringify(values);
}

/**
 * A page of a shared result: `{"c": [columns], "i": [items]}`, each row an array of its values
 * (lossless, engine/table/sxt_values.ts) in the order of `c`, which starts with `columns` and
 * gains any other field a row has; each fragment a JSON string.
 */
export function encodePage(items: readonly StoredItem[], columns: readonly string[]): Uint8Array {
  const pageColumns = [...columns];
  const texts = items.map((item) => encodeItem(item, pageColumns));
  return encodeText(`{"c":${JSON.stringify(pageColumns)},"i":[${texts.join(",")}]}`);
}

/** The items of a page written by `encodePage`. */
export function decodePage(bytes: Uint8Array): StoredItem[] {
  const page = JSON.parse(decodeText(bytes)) as { c: string[]; i: unknown[] };
  const columns = page.c;
  return page.i.map((item) => {
    if (typeof item === "string") return item;
    const values = item as unknown[];
    const row: Row = {};
    for (let j = 0; j < values.length; j++) {
      if (values[j] !== ABSENT) row[columns[j]!] = decodeValue(values[j]);
    }
    return row;
  });
}
