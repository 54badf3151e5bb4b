/**
 * A `select` with aggregates, grouped by its `group(...)` keys (hash grouping). Each group
 * keeps its first input row and the state of each aggregate; outputs are evaluated on that
 * row extended with the aggregates' results, so non-aggregate columns see the group's keys.
 * Without keys there is exactly one group, even over no input (count 0, the others null).
 *
 * `count` and `sum` are folded into typed arrays indexed by group number (one number and a
 * flag per group, no object per group): with many groups, chasing an accumulator object and
 * its closure per row costs far more than the addition. Other aggregates keep accumulators,
 * whose states a worker exports as plain data and the merge takes in (Accumulator.mergeState).
 */

import type { Accumulator, AggregateSpec, Column, Compiled, PlanNode } from "../plan/plan.ts";
import { Interval, type Row, type Value } from "../values/values.ts";
import { estimateBytes } from "../values/value_ops.ts";
import {
  BATCH_ROWS,
  type BatchStream,
  checkCancelled,
  type DirectGroups,
  type ExecContext,
  TimeSlicer,
} from "../plan/context.ts";
import { GroupTable } from "./group_table.ts";
import type { PartialGroups, RowColumns } from "../contracts/scan_workers.ts";
import { decodeRow, encodeRow, encodeRowColumns, rowOfColumns } from "../table/sxt_values.ts";

export interface AggregateOptions {
  readonly keys: readonly Compiled[];
  readonly aggregates: readonly AggregateSpec[];
  readonly outputs: readonly Column[];
}

/** Groups of a partial state merged between two looks at the clock. */
const MERGE_STEP = 1024;

const SEEN = 1;
const INTERVAL = 2;

/** Per-group numbers (a count or a total) and flags (SEEN, INTERVAL), grown by doubling. */
class FoldSlots {
  values = new Float64Array(64);
  flags = new Uint8Array(64);

  ensure(groups: number): void {
    if (groups <= this.values.length) return;
    const size = Math.max(groups, this.values.length * 2);
    const values = new Float64Array(size);
    values.set(this.values);
    const flags = new Uint8Array(size);
    flags.set(this.flags);
    this.values = values;
    this.flags = flags;
  }
}

/**
 * The state of a hash aggregation over some of its input: groups in the order they first
 * appeared, each with its first row and its aggregates. A worker's partial state (folded
 * aggregates only) can be exported and merged into another's: merged in the order of the
 * workers' shares, the groups, their first rows and their results are those of one pass over
 * the whole input.
 */
export class Grouping {
  readonly #options: AggregateOptions;
  readonly #table: GroupTable;
  readonly #firsts: Row[] = [];
  readonly #n: number;
  readonly #args: readonly (((row: Row) => Value) | null)[];
  readonly #folds: (FoldSlots | null)[];
  readonly #kinds: readonly string[];
  readonly #generic: boolean;
  // Per group: the accumulators of the aggregates that are not folded (null where folded) and
  // what each reported holding (distinct sets, arrays), already charged.
  readonly #accumulators: (Accumulator | null)[][] = [];
  readonly #held: number[][] = [];
  #tracks: boolean[] | null = null;
  readonly #groupBytes: number;
  #directCharged = 0;

  constructor(options: AggregateOptions) {
    const { keys, aggregates } = options;
    this.#options = options;
    this.#table = new GroupTable(keys);
    this.#n = aggregates.length;
    this.#args = aggregates.map((a) => a.arg);
    this.#folds = aggregates.map((a) => (a.fold === undefined ? null : new FoldSlots()));
    this.#kinds = aggregates.map((a) => a.fold ?? "accumulate");
    this.#generic = this.#kinds.some((k) => k === "accumulate");
    this.#groupBytes = 64 * (this.#n + 1);
  }

  /**
   * Whether partial states can be merged: every aggregate is folded or its accumulator exports
   * its state (all the built-in ones do).
   */
  static mergeable(options: AggregateOptions): boolean {
    return options.aggregates.every((a) =>
      a.fold !== undefined || typeof a.create().mergeState === "function"
    );
  }

  /**
   * The grouping as a source may fold records into it without rows (DirectGroups), or null
   * when its keys or aggregates are not of that kind (one key that is a field; counts and sums
   * of fields or rows).
   */
  direct(ctx: Pick<ExecContext, "memory">): DirectGroups | null {
    const { keys, aggregates } = this.#options;
    if (keys.length !== 1 || keys[0]!.field === undefined) return null;
    const folds: { kind: "count" | "sum"; field: string | null }[] = [];
    for (const a of aggregates) {
      if (a.fold === undefined) return null;
      if (a.arg !== null && a.argField === undefined) return null;
      folds.push({ kind: a.fold, field: a.arg === null ? null : a.argField! });
    }
    const table = this.#table;
    const slots = this.#folds;
    return {
      key: keys[0]!.field,
      folds,
      add: (row) => {
        const bytes = this.add([row]);
        if (bytes > 0) {
          ctx.memory.take(bytes, "group");
          this.#directCharged += bytes;
        }
      },
      ipv4: () => table.ipv4Table,
      smallInts: () => table.smallInts,
      values: (i) => slots[i]!.values,
      flags: (i) => slots[i]!.flags,
    };
  }

  /**
   * The context to open this grouping's input with: one that offers the grouping to a source
   * directly under it (`ExecContext.direct`), else `ctx`.
   */
  inputContext(input: PlanNode, ctx: ExecContext): ExecContext {
    if (input.kind !== "source") return ctx;
    const direct = this.direct(ctx);
    return direct === null ? ctx : { ...ctx, direct };
  }

  /** The bytes charged to the memory budget for rows a source handed over through `direct`. */
  get directCharged(): number {
    return this.#directCharged;
  }

  #newGroup(g: number, first: Row): void {
    this.#firsts.push(first);
    for (const f of this.#folds) f?.ensure(g + 1);
    if (this.#generic) {
      const accs = this.#options.aggregates.map((a, i) =>
        this.#folds[i] === null ? a.create() : null
      );
      this.#tracks ??= accs.map((acc) => acc !== null && acc.bytes !== undefined);
      this.#accumulators.push(accs);
      this.#held.push(accs.map(() => 0));
    }
  }

  /** Adds a batch; returns the bytes of state it added (for the memory budget). */
  add(batch: readonly Row[]): number {
    const table = this.#table;
    const n = this.#n;
    const args = this.#args;
    const kinds = this.#kinds;
    const folds = this.#folds;
    const aggregates = this.#options.aggregates;
    let bytes = 0;
    for (let r = 0; r < batch.length; r++) {
      const row = batch[r]!;
      let g = table.find(row);
      if (g < 0) {
        g = table.add();
        this.#newGroup(g, row);
        bytes += estimateBytes(row) + this.#groupBytes;
      }
      for (let i = 0; i < n; i++) {
        const arg = args[i]!;
        // count(*) counts rows: it gets a non-null marker for each.
        const v: Value = arg === null ? true : arg(row);
        switch (kinds[i]) {
          case "count":
            if (v !== null) folds[i]!.values[g]!++;
            break;
          case "sum": {
            if (v === null) break;
            const f = folds[i]!;
            if (typeof v === "number") {
              f.values[g]! += v;
              f.flags[g]! |= SEEN;
            } else if (v instanceof Interval) {
              f.values[g]! += v.ms;
              f.flags[g]! |= SEEN | INTERVAL;
            } else aggregates[i]!.create().add(v); // throws sum's own error for the value
            break;
          }
          default: {
            const acc = this.#accumulators[g]![i]!;
            acc.add(v);
            if (this.#tracks![i] && acc.bytes !== this.#held[g]![i]) {
              bytes += acc.bytes! - this.#held[g]![i]!;
              this.#held[g]![i] = acc.bytes!;
            }
          }
        }
      }
    }
    return bytes;
  }

  /**
   * The state of a mergeable grouping as plain data: first rows, per folded aggregate its
   * numbers, per other aggregate each group's exported accumulator state.
   */
  exportPartial(): PartialGroups {
    const size = this.#firsts.length;
    return {
      firsts: encodeRowColumns(this.#firsts) ?? this.#firsts.map(encodeRow),
      folds: this.#folds.map((f) =>
        f === null ? null : { values: f.values.slice(0, size), flags: f.flags.slice(0, size) }
      ),
      states: this.#folds.map((f, i) =>
        f === null ? this.#accumulators.map((accs) => accs[i]!.exportState()) : null
      ),
    };
  }

  /** Merges a partial state exported by a grouping of the same options; returns bytes added. */
  merge(partial: PartialGroups): number {
    return this.#mergeRange(partial, 0, partial.firsts.length);
  }

  /**
   * As `merge`, with a turn of the event loop whenever the query's slice is used up: a share
   * of a million groups takes a few hundred ms to merge.
   */
  async mergeInSlices(partial: PartialGroups, ctx: ExecContext): Promise<number> {
    const own = ctx.slicer ? null : new TimeSlicer(ctx.signal);
    const slicer = ctx.slicer ?? own!;
    let bytes = 0;
    try {
      for (let p = 0; p < partial.firsts.length; p += MERGE_STEP) {
        bytes += this.#mergeRange(partial, p, Math.min(partial.firsts.length, p + MERGE_STEP));
        await slicer.check();
      }
    } finally {
      own?.stop();
    }
    return bytes;
  }

  #mergeRange(partial: PartialGroups, from: number, to: number): number {
    const table = this.#table;
    const firsts = partial.firsts;
    const columns = "names" in firsts ? firsts : null;
    // One IPv4 key, a column of addresses: a group already here is found by its bits, and a
    // row is made only for a new group.
    const bits = columns === null ? null : this.#ipv4Key(columns);
    // A row of columns is estimated as estimateBytes would (32, and per field 16, its name, its
    // value): the typed columns' share once, the others' values row by row.
    let fixed = 32;
    const listed: string[] = [];
    columns?.names.forEach((name, j) => {
      const c = columns.columns[j]!;
      fixed += 16 + 2 * name.length;
      if (c instanceof Uint32Array) fixed += 24; // an IPv4 address
      else if (c instanceof Float64Array) fixed += 8;
      else listed.push(name);
    });
    let bytes = 0;
    for (let p = from; p < to; p++) {
      let g = bits === null ? -1 : table.findIpv4Bits(bits[p]!);
      if (g < 0) {
        const first = columns === null
          ? decodeRow((firsts as readonly Record<string, unknown>[])[p]!)
          : rowOfColumns(columns, p);
        g = table.find(first);
        if (g < 0) {
          g = table.add();
          this.#newGroup(g, first);
          bytes += columns === null ? estimateBytes(first) : fixed;
          for (const name of listed) bytes += estimateBytes(first[name]!);
          bytes += this.#groupBytes;
        }
      }
      for (let i = 0; i < this.#n; i++) {
        const f = this.#folds[i]!;
        const from = partial.folds[i];
        if (f !== null && from) {
          f.values[g]! += from.values[p]!;
          f.flags[g]! |= from.flags[p]!;
          continue;
        }
        const acc = this.#accumulators[g]![i]!;
        acc.mergeState(partial.states[i]![p]);
        if (this.#tracks![i] && acc.bytes !== this.#held[g]![i]) {
          bytes += acc.bytes! - this.#held[g]![i]!;
          this.#held[g]![i] = acc.bytes!;
        }
      }
    }
    return bytes;
  }

  /** The bits of the first rows' one key, when it is a field whose column holds IPv4 addresses. */
  #ipv4Key(columns: RowColumns): Uint32Array | null {
    const { keys } = this.#options;
    if (keys.length !== 1 || keys[0]!.field === undefined) return null;
    const c = columns.columns[columns.names.indexOf(keys[0]!.field)];
    return c instanceof Uint32Array ? c : null;
  }

  /** The output rows, in the order the groups first appeared. */
  *rows(): Generator<Row[]> {
    const { keys, aggregates, outputs } = this.#options;
    if (keys.length === 0 && this.#table.size === 0) this.#newGroup(this.#table.addEmpty(), {});
    let out: Row[] = [];
    for (let g = 0; g < this.#firsts.length; g++) {
      const row: Row = { ...this.#firsts[g] };
      for (let i = 0; i < this.#n; i++) row[aggregates[i]!.slot] = this.#result(i, g);
      const shaped: Row = {};
      for (const c of outputs) shaped[c.name] = c.fn(row);
      out.push(shaped);
      if (out.length >= BATCH_ROWS) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }

  #result(i: number, g: number): Value {
    const f = this.#folds[i]!;
    if (f === null) return this.#accumulators[g]![i]!.result();
    if (this.#kinds[i] === "count") return f.values[g]!;
    const flags = f.flags[g]!;
    if ((flags & SEEN) === 0) return null;
    return (flags & INTERVAL) !== 0 ? new Interval(f.values[g]!) : f.values[g]!;
  }
}

/**
 * The aggregate's rows; `grouping`, when given, is the one whose `inputContext` opened `input`.
 */
export async function* aggregateRows(
  input: BatchStream,
  options: AggregateOptions,
  ctx: ExecContext,
  grouping: Grouping = new Grouping(options),
): BatchStream {
  let charged = 0;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      const bytes = grouping.add(batch);
      if (bytes > 0) {
        ctx.memory.take(bytes, "group");
        charged += bytes;
      }
    }
    for (const out of grouping.rows()) {
      checkCancelled(ctx.signal);
      yield out;
    }
  } finally {
    ctx.memory.release(charged + grouping.directCharged);
  }
}
