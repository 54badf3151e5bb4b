/**
 * Paging by items: `Range: items=<first>-<last>` (0-based, inclusive) or `items=<first>-`.
 * Pure: parsing and resolving against the total return problems as data.
 */

export interface ItemRange {
  readonly first: number;
  /** Inclusive; undefined means to the end. */
  readonly last?: number | undefined;
}

export type RangeParse =
  | { readonly ok: true; readonly range: ItemRange | null }
  | { readonly ok: false; readonly message: string };

export type RangeResolution =
  | { readonly ok: true; readonly first: number; readonly last: number }
  | { readonly ok: false; readonly message: string };

const RANGE = /^items=(\d+)-(\d+)?$/;

/**
 * An item index as a number: one past what any result holds reads as the largest safe integer,
 * so that "to the end" sent as a huge last item is clipped and a huge first item is past the end
 * (416), not malformed.
 */
const index = (digits: string) => Math.min(Number(digits), Number.MAX_SAFE_INTEGER);

/** The range a `Range` header asks for; null when there is none. */
export function parseRange(header: string | null | undefined): RangeParse {
  if (header === null || header === undefined) return { ok: true, range: null };
  const m = RANGE.exec(header.trim());
  if (!m) {
    return {
      ok: false,
      message: `Range '${header}' is not of the form items=<first>-<last> or items=<first>-`,
    };
  }
  const first = index(m[1]!);
  const last = m[2] === undefined ? undefined : index(m[2]);
  if (last !== undefined && last < first) {
    return { ok: false, message: `Range '${header}': the last item ${last} is before the first` };
  }
  return { ok: true, range: { first, last } };
}

/** The inclusive item indexes to send of `total`, the last clipped to the end. */
export function resolveRange(range: ItemRange, total: number): RangeResolution {
  if (range.first >= total) {
    return {
      ok: false,
      message: `items ${range.first}- lie outside the result of ${total} item${
        total === 1 ? "" : "s"
      }`,
    };
  }
  const last = Math.min(range.last ?? total - 1, total - 1);
  return { ok: true, first: range.first, last };
}

/** `items 0-9/120` */
export function contentRange(first: number, last: number, total: number): string {
  return `items ${first}-${last}/${total}`;
}
