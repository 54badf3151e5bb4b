/**
 * The executable plan: a tree of operator nodes, readonly and tagged, built by the planner
 * (engine/planning/planner.ts), rewritten by the passes of engine/planning/passes/ (filters pushed into
 * sources, top-N sorts, the fields each source reads) and run as it stands by engine/exec/run.ts.
 * Expressions are already compiled to row functions; `label`s keep their text for `printPlan`
 * (tests and `explain`), which therefore prints the plan that runs.
 */

import type { ColumnCacheConfig } from "../contracts/column_cache.ts";
import type { SkipTally } from "./skip_tally.ts";
import { assertNever, type Expr } from "../front/ast.ts";
import type { Field, Schema, Type } from "../values/types.ts";
import { typeToString } from "../values/types.ts";
import type { Row, Value } from "../values/values.ts";
import type { BatchStream, ExecContext } from "./context.ts";
import type { FileEntry, Warning } from "../contracts/datastore.ts";
import type {
  PartDescription,
  ScanWorkers,
  ShareQuery,
  SourceReader,
} from "../contracts/scan_workers.ts";
import type { TreeFiles } from "../contracts/resource_tree.ts";
import type { EngineLimits } from "../contracts/engine_limits.ts";

/** A compiled expression: evaluated once per row. */
export type RowFn = (row: Row) => Value;

/**
 * Where a compiled expression came from, kept beside it so that a scan worker can compile it
 * alike (engine/exec/parallel/part_description.ts): its syntax tree, the fields it was typed
 * against (null: an open schema) and the values of the `$constants` it reads.
 */
export interface ExprOrigin {
  readonly expr: Expr;
  readonly fields: readonly Field[] | null;
  readonly params: ReadonlyMap<string, { readonly value: Value; readonly type: Type }>;
}

/** A compiled expression with the text it came from. */
export interface Compiled {
  readonly fn: RowFn;
  readonly label: string;
  /**
   * Set when the expression is a plain field reference (a group key, a worker's projected
   * column): that field's name.
   */
  readonly field?: string;
  /** Set by the planner: what it was compiled from (absent: it runs in the query's thread only). */
  readonly origin?: ExprOrigin;
}

export interface Column extends Compiled {
  readonly name: string;
}

/** One aggregate of a grouped select: `create` gives a fresh accumulator per group. */
export interface AggregateSpec {
  /** The synthetic field name the outputs read the result from. */
  readonly slot: string;
  readonly label: string;
  /** The aggregate function's name, lower case (set by the planner; AGGREGATES has it). */
  readonly name?: string;
  /** Null for `count(*)`. */
  readonly arg: RowFn | null;
  /** What `arg` was compiled from (Compiled.origin). */
  readonly argOrigin?: ExprOrigin;
  readonly create: () => Accumulator;
  /** The constant numbers after the argument (`percentile(x, 0.95)`), when it takes some. */
  readonly params?: readonly number[];
  /**
   * Set for `count` and `sum`, which the aggregate operator may keep as plain numbers per group
   * (the same results as `create`'s accumulators, without an object per group).
   */
  readonly fold?: "count" | "sum";
  /** Set when the argument is a plain field reference: that field's name. */
  readonly argField?: string;
}

/** One window function or running aggregate of a `window(...)` (engine/exec/window.ts). */
export interface WindowSpec {
  /** The synthetic field name the outputs read the value from. */
  readonly slot: string;
  readonly label: string;
  readonly kind: "row_number" | "rank" | "dense_rank" | "lag" | "lead" | "aggregate";
  /** The argument (lag, lead, an aggregate's); null for none and `count(*)`. */
  readonly arg: RowFn | null;
  /** How many rows back (lag) or ahead (lead); 0 for the others. */
  readonly offset: number;
  /** A fresh accumulator per group, for a running aggregate. */
  readonly create?: () => Accumulator;
}

/** The accumulator shape the planner adapts the functions' aggregates to. */
export interface Accumulator {
  add(value: Value): void;
  result(): Value;
  /** Bytes held beyond a small fixed size (distinct sets, arrays), charged to the budget. */
  readonly bytes?: number;
  /** The state as plain data, for merging in another thread (engine/functions/aggregates.ts). */
  exportState(): unknown;
  /** Takes in the exported state of the values that followed this accumulator's. */
  mergeState(state: unknown): void;
}

/**
 * A filter pushed into a source: `keep` says whether a row passes; it reads only the fields
 * `reads`, so that a source may call it on a row of just those before building the rest.
 */
export interface PushedFilter {
  readonly reads: ReadonlySet<string>;
  readonly keep: (row: Row) => boolean;
}

/** The filter node a source took in (engine/planning/passes/push_filters.ts), as it printed. */
export interface SourceFilter extends PushedFilter {
  readonly condition: Compiled;
  readonly negated: boolean;
}

/** What a source is asked for when it is opened: a source node is one. */
export interface SourceRead {
  /** The fields the rest of the plan reads, for sources that convert only those; null: all. */
  readonly fields: readonly string[] | null;
  /** Only the rows this filter keeps are handed out; null: every row. */
  readonly filter: PushedFilter | null;
  /**
   * Fields of `fields` read only through member paths (`status.errorCode`): a source of
   * nested data may give such a field as a tuple of just those members.
   */
  readonly paths?: ReadonlyMap<string, readonly (readonly string[])[]>;
}

/** Opens a source: LIST, PARSE, READ_JSON behind one closure. */
export type OpenSource = (ctx: ExecContext, read: SourceRead) => BatchStream;

/**
 * A source that can be read in shares by several workers (PARSE and READ_JSON over files of
 * this host): its files are listed once and split (engine/exec/parallel/shares.ts), and each
 * worker reads its share as if it were all the files.
 */
export interface SourceScan {
  readonly list: (ctx: ExecContext) => AsyncIterable<FileEntry>;
  /** Whether `file` holds one record per line, so that it may be cut into line ranges. */
  readonly lines: (file: FileEntry, signal: AbortSignal) => Promise<boolean>;
  readonly read: (files: Iterable<FileEntry>, ctx: ExecContext, read: SourceRead) => BatchStream;
  /**
   * The warning for the records the shares skipped, given their merged tally, when the source
   * words it itself (PARSE names the first unmatched records); else the tally's own warning.
   */
  readonly skipped?: (
    files: readonly FileEntry[],
    tally: SkipTally,
    ctx: ExecContext,
  ) => Promise<Warning | null>;
}

/** A source that workers may read, as plain data: its reader and the files it lists. */
export interface SourceOrigin {
  readonly reader: SourceReader;
  readonly src: string;
  readonly from?: number;
  readonly to?: number;
}

/**
 * Every node has its output schema. `open` marks a schema that lists only the fields known
 * before reading (READ_JSON): other fields may appear, typed ANY, and are resolved from data.
 */
interface Shape {
  readonly schema: Schema;
  readonly open?: boolean | undefined;
}

export type PlanNode = Shape & PlanStep;

type PlanStep =
  | { readonly kind: "values"; readonly rows: readonly Row[] }
  /**
   * LIST, PARSE, READ_JSON: the sources' own operators behind one closure, opened with the node
   * itself as its `SourceRead`. The planner leaves `fields` and `filter` null (all fields, every
   * row); the passes fill them in where `takes` says the source can use them.
   */
  | {
    readonly kind: "source";
    readonly label: string;
    readonly start: OpenSource;
    readonly takes: { readonly fields: boolean; readonly filter: boolean };
    readonly fields: readonly string[] | null;
    readonly filter: SourceFilter | null;
    readonly paths?: ReadonlyMap<string, readonly (readonly string[])[]>;
    /** Set where the source can be read in shares by workers. */
    readonly scan?: SourceScan;
    /** With `scan`: what a worker rebuilds the source from (SourceDescription). */
    readonly origin?: SourceOrigin;
    /** Read through the column cache, when the query has one, without `scan` (READ_CSV). */
    readonly cached?: boolean;
  }
  /** A stored table `@[x.sxt]`. */
  | {
    readonly kind: "table";
    readonly canonical: string;
    readonly real: string;
    /** The tree's file operations `real` is a location of. */
    readonly files: TreeFiles;
  }
  /** A stored script `@[x.sx](...)`: its plan, inlined; the node only names it. */
  | {
    readonly kind: "view";
    readonly canonical: string;
    readonly input: PlanNode;
  }
  | {
    readonly kind: "filter";
    readonly input: PlanNode;
    readonly condition: Compiled;
    readonly negated: boolean;
    readonly reads: ReadonlySet<string>;
  }
  | {
    readonly kind: "project";
    readonly input: PlanNode;
    readonly columns: readonly Column[];
    /** Each output row starts as a copy of its input row (`*` over an open input). */
    readonly copyInput: boolean;
    /** Input fields the columns read; null when `*` reads all. */
    readonly reads: ReadonlySet<string> | null;
  }
  | {
    readonly kind: "aggregate";
    readonly input: PlanNode;
    readonly keys: readonly Compiled[];
    readonly aggregates: readonly AggregateSpec[];
    /** Evaluated on the group's first input row extended with the aggregates' slots. */
    readonly outputs: readonly Column[];
    readonly reads: ReadonlySet<string>;
  }
  | {
    readonly kind: "sort";
    readonly input: PlanNode;
    readonly keys: readonly (Compiled & { readonly descending: boolean })[];
    readonly reads: ReadonlySet<string>;
    /** A top-N sort (under a limit): only the first `top` rows of the order are kept; null: all. */
    readonly top: number | null;
  }
  | {
    readonly kind: "window";
    readonly input: PlanNode;
    /** The groups (`by:`) and the order in each (`order:`); rows come out in that order. */
    readonly by: readonly Compiled[];
    readonly order: readonly (Compiled & { readonly descending: boolean })[];
    readonly functions: readonly WindowSpec[];
    /** Evaluated on the input row extended with the functions' slots; added to the row. */
    readonly outputs: readonly Column[];
    readonly reads: ReadonlySet<string>;
  }
  | {
    readonly kind: "limit";
    readonly input: PlanNode;
    readonly count: number;
    readonly offset: number;
  }
  | {
    readonly kind: "join";
    readonly left: PlanNode;
    readonly right: PlanNode;
    readonly outer: boolean;
    readonly leftKeys: readonly Compiled[];
    readonly rightKeys: readonly Compiled[];
    /**
     * Right field name to output name (`right_x` when `x` clashes with a left field); null when
     * a side is open, and names are then chosen row by row.
     */
    readonly rightNames: ReadonlyMap<string, string> | null;
    readonly leftReads: ReadonlySet<string>;
    readonly rightReads: ReadonlySet<string>;
  }
  | { readonly kind: "union"; readonly inputs: readonly PlanNode[] }
  | {
    readonly kind: "unnest";
    readonly input: PlanNode;
    readonly array: Compiled;
    readonly name: string;
    /** `leftunnest`: rows whose array is null or empty are kept. */
    readonly outer?: boolean;
    readonly reads: ReadonlySet<string>;
  }
  | {
    readonly kind: "save";
    readonly input: PlanNode;
    readonly canonical: string;
    readonly real: string;
    /** The tree's file operations `real` is a location of. */
    readonly files: TreeFiles;
  }
  /**
   * The result `input`, run after the earlier pipeline statements that save tables (`before`,
   * in script order, each drained and its rows dropped), so a later statement reads what they
   * wrote.
   */
  | {
    readonly kind: "after";
    readonly before: readonly PlanNode[];
    readonly input: PlanNode;
  };

/**
 * The parts of a plan that run in scan workers (engine/planning/passes/split_workers.ts), in the
 * order of their numbers: a worker's task (ShareTask.node) names its part by its number.
 */
export interface WorkerSplit {
  readonly nodes: readonly PlanNode[];
  /** Each part as plain data, what a worker builds its operators from (ShareTask.part). */
  readonly parts: readonly PartDescription[];
  /** The root is a part, and its workers render its rows when the result has a text format. */
  readonly rootRenders: boolean;
  /** The root is the one part only then: a row pipeline that filters nothing runs here else. */
  readonly rootOnlyRendered: boolean;
}

/** What `compile` hands out: the root node and what execution needs besides it. */
export interface CompiledPlan {
  readonly kind: "plan";
  readonly root: PlanNode;
  readonly timeZone: string;
  /** Query time for `now()`, fixed at compile time so constants and rows agree. */
  readonly now: number;
  readonly limits: EngineLimits;
  /** Where the scans may run in workers: the workers, and whose files they list. */
  readonly parallel?: {
    readonly workers: ScanWorkers;
    readonly query: ShareQuery;
  };
  /** The parts that run in the workers; absent: every part runs in the query's thread. */
  readonly split?: WorkerSplit;
  /** The column cache the sources read through (QueryContext.columnCache); absent: none. */
  readonly cache?: ColumnCacheConfig;
}

/** `a, b.c, b.d`: the fields a source reads, those read only through members as their paths. */
function fieldsText(
  fields: readonly string[],
  paths: ReadonlyMap<string, readonly (readonly string[])[]> | undefined,
): string {
  return fields.flatMap((f) => {
    const below = paths?.get(f);
    return below ? [...new Set(below.map((p) => [f, ...p].join(".")))] : [f];
  }).join(", ");
}

function schemaText(schema: Schema): string {
  return schema.map((f) => `${f.name} ${f.nullable ? "?" : ""}${typeToString(f.type)}`).join(
    ", ",
  );
}

function filterText(negated: boolean, condition: Compiled): string {
  return `${negated ? "filter_out" : "filter"} ${condition.label}`;
}

function headline(node: PlanNode): string {
  switch (node.kind) {
    case "values":
      return `values ${node.rows.length} row${node.rows.length === 1 ? "" : "s"}`;
    case "source":
      return `source ${node.label}${
        node.filter ? ` ${filterText(node.filter.negated, node.filter.condition)}` : ""
      }${node.fields ? ` reads(${fieldsText(node.fields, node.paths)})` : ""}`;
    case "table":
      return `table ${node.canonical}`;
    case "view":
      return `view ${node.canonical}`;
    case "filter":
      return filterText(node.negated, node.condition);
    case "project":
      return `project ${node.columns.map((c) => `${c.label} as ${c.name}`).join(", ")}`;
    case "aggregate":
      return `aggregate keys(${node.keys.map((k) => k.label).join(", ")}) aggs(${
        node.aggregates.map((a) => a.label).join(", ")
      })`;
    case "sort":
      return `sort ${node.keys.map((k) => `${k.label}${k.descending ? " desc" : ""}`).join(", ")}${
        node.top === null ? "" : ` (top ${node.top})`
      }`;
    case "limit":
      return `limit ${node.count}${node.offset ? ` offset ${node.offset}` : ""}`;
    case "window":
      return `window ${node.outputs.map((c) => `${c.label} as ${c.name}`).join(", ")} by(${
        node.by.map((k) => k.label).join(", ")
      }) order(${node.order.map((k) => `${k.label}${k.descending ? " desc" : ""}`).join(", ")})`;
    case "join":
      return `${node.outer ? "leftjoin" : "join"} on ${
        node.leftKeys.map((k, i) => `${k.label} = ${node.rightKeys[i]!.label}`).join(" and ")
      }`;
    case "union":
      return `union`;
    case "unnest":
      return `${node.outer ? "leftunnest" : "unnest"} ${node.array.label} as ${node.name}`;
    case "save":
      return `save ${node.canonical}`;
    case "after":
      return `after ${node.before.length} saving statement${node.before.length === 1 ? "" : "s"}`;
  }
}

/** The inputs of a node, in order. */
export function childrenOf(node: PlanNode): readonly PlanNode[] {
  switch (node.kind) {
    case "values":
    case "source":
    case "table":
      return [];
    case "join":
      return [node.left, node.right];
    case "union":
      return node.inputs;
    case "view":
    case "filter":
    case "project":
    case "aggregate":
    case "sort":
    case "limit":
    case "unnest":
    case "window":
    case "save":
      return [node.input];
    case "after":
      return [...node.before, node.input];
  }
}

/** `node` with its inputs replaced by `inputs`, in the order `childrenOf` gives them. */
export function withChildren(node: PlanNode, inputs: readonly PlanNode[]): PlanNode {
  switch (node.kind) {
    case "values":
    case "source":
    case "table":
      return node;
    case "join":
      return { ...node, left: inputs[0]!, right: inputs[1]! };
    case "union":
      return { ...node, inputs };
    case "view":
    case "filter":
    case "project":
    case "aggregate":
    case "sort":
    case "limit":
    case "unnest":
    case "window":
    case "save":
      return { ...node, input: inputs[0]! };
    case "after":
      return { ...node, before: inputs.slice(0, -1), input: inputs[inputs.length - 1]! };
    default:
      return assertNever(node);
  }
}

/**
 * One line per node, inputs indented below, each with its output schema:
 * `filter a > 1  [a INTEGER, b STRING]`; with a `split`, the parts that run in workers say so:
 * `aggregate keys(s) aggs(count(*)) in workers #0  [...]`.
 */
export function printPlan(
  node: PlanNode,
  options: {
    schemas?: boolean;
    split?: WorkerSplit;
    /** Said after a node's headline (explain(): a source read through the column cache). */
    note?: (node: PlanNode) => string;
  } = {},
): string {
  const lines: string[] = [];
  const split = options.split;
  const visit = (n: PlanNode, depth: number) => {
    const schema = options.schemas === false
      ? ""
      : `  [${schemaText(n.schema)}${n.open ? (n.schema.length ? ", ..." : "...") : ""}]`;
    const part = split?.nodes.indexOf(n) ?? -1;
    const where = part < 0
      ? ""
      : split!.rootOnlyRendered
      ? ` in workers #${part} (when its rows are rendered)`
      : ` in workers #${part}`;
    lines.push(`${"  ".repeat(depth)}${headline(n)}${options.note?.(n) ?? ""}${where}${schema}`);
    for (const c of childrenOf(n)) visit(c, depth + 1);
  };
  visit(node, 0);
  return lines.join("\n");
}
