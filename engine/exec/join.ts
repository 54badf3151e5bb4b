/**
 * `join(@other on left.a = right.b)` and `leftjoin(...)`: a hash join that builds on the right
 * side (charged to the memory budget) and streams the left. Null keys never match.
 */

import type { Compiled } from "../plan.ts";
import type { Row, Value } from "../values.ts";
import { combineKeys, estimateBytes, type ValueKey, valueKey } from "../value_ops.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

export interface JoinOptions {
  readonly outer: boolean;
  readonly leftKeys: readonly Compiled[];
  readonly rightKeys: readonly Compiled[];
  /** Null: names are chosen row by row (`right_x` when the left row has `x`). */
  readonly rightNames: ReadonlyMap<string, string> | null;
}

function keyOf(keys: readonly Compiled[], row: Row): string | null {
  const parts: ValueKey[] = [];
  for (const k of keys) {
    const v: Value = k.fn(row);
    if (v === null) return null;
    parts.push(valueKey(v));
  }
  return combineKeys(parts);
}

export async function* joinRows(
  left: BatchStream,
  right: BatchStream,
  options: JoinOptions,
  ctx: ExecContext,
): BatchStream {
  const table = new Map<string, Row[]>();
  let charged = 0;
  try {
    for await (const batch of right) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (const row of batch) {
        const key = keyOf(options.rightKeys, row);
        if (key === null) continue;
        let renamed: Row = row;
        if (options.rightNames) {
          renamed = {};
          for (const [from, to] of options.rightNames) renamed[to] = row[from] ?? null;
        }
        const list = table.get(key);
        if (list) list.push(renamed);
        else table.set(key, [renamed]);
        bytes += estimateBytes(row) + key.length * 2 + 48;
      }
      ctx.memory.take(bytes, "join");
      charged += bytes;
    }
    const empty: Row = {};
    for (const to of options.rightNames?.values() ?? []) empty[to] = null;
    const merge = options.rightNames ? (l: Row, r: Row) => ({ ...l, ...r }) : mergeOpen;
    for await (const batch of left) {
      checkCancelled(ctx.signal);
      const out: Row[] = [];
      for (const row of batch) {
        const key = keyOf(options.leftKeys, row);
        const matches = key === null ? undefined : table.get(key);
        if (matches) { for (const m of matches) out.push(merge(row, m)); }
        else if (options.outer) out.push({ ...row, ...empty });
      }
      if (out.length > 0) yield out;
    }
  } finally {
    ctx.memory.release(charged);
  }
}

/** Joins two rows of open schemas: a right field whose name the left row has gets `right_`. */
function mergeOpen(left: Row, right: Row): Row {
  const out: Row = { ...left };
  for (const [k, v] of Object.entries(right)) {
    let name = k;
    while (name in left) name = `right_${name}`;
    out[name] = v;
  }
  return out;
}
