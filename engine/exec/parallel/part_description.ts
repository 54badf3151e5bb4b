/**
 * The part of a plan a scan worker runs, as plain data and back. The planner's split
 * (engine/planning/passes/split_workers.ts) describes each part from what its nodes were
 * compiled from (`Compiled.origin`, `AggregateSpec.argOrigin`, the source's `origin`); a worker
 * builds the part's operators from that description with the same expression and pattern
 * compilers: no script to compile, no view to load, no right to check again.
 *
 *   describePart(node)  → PartDescription (structured-cloneable: literal values encoded)
 *   buildPart(part, …)  → PlanNode, printed by printPlan as the server's part
 */

import type {
  AggregateDescription,
  ColumnDescription,
  ExprDescription,
  PartDescription,
  SourceDescription,
} from "../../contracts/scan_workers.ts";
import type { FileEntry } from "../../contracts/datastore.ts";
import type { Expr } from "../../front/ast.ts";
import type {
  AggregateSpec,
  Column,
  Compiled,
  ExprOrigin,
  PlanNode,
  SourceFilter,
  SourceScan,
} from "../../plan/plan.ts";
import type { ExecContext } from "../../plan/context.ts";
import { decodeValue, encodeValue } from "../../table/sxt_values.ts";

/** A value as it crosses to a worker: the stored tables' lossless form (engine/table/sxt_values.ts). */
type Encoded = unknown;
import type { Value } from "../../values/values.ts";
import { typeExpr } from "../../expr/compile_expr.ts";
import { AGGREGATES } from "../../functions/aggregates.ts";
import { compilePattern } from "../../pattern/compile_pattern.ts";
import { readJson, readParse } from "../cached_sources.ts";
import { readJsonSource } from "../read_json_source.ts";
import { EVERY_LINE, parseRecordsSource } from "../parse_records.ts";
import { warnAbsentFields } from "../absent_fields.ts";

/** `node` as plain data, or undefined when some of it was not made by the planner. */
export function describePart(node: PlanNode): PartDescription | undefined {
  try {
    return describe(node);
  } catch (e) {
    if (e instanceof Undescribable) return undefined;
    throw e;
  }
}

class Undescribable extends Error {}

function describe(node: PlanNode): PartDescription {
  const shape = { schema: node.schema, open: node.open ?? false };
  switch (node.kind) {
    case "source":
      return describeSource(node);
    case "view":
      return { kind: "view", ...shape, canonical: node.canonical, input: describe(node.input) };
    case "filter":
      return {
        kind: "filter",
        ...shape,
        input: describe(node.input),
        condition: describeExpr(node.condition),
        negated: node.negated,
        reads: [...node.reads],
      };
    case "project":
      return {
        kind: "project",
        ...shape,
        input: describe(node.input),
        columns: node.columns.map(describeColumn),
        copyInput: node.copyInput,
        reads: node.reads && [...node.reads],
      };
    case "unnest":
      return {
        kind: "unnest",
        ...shape,
        input: describe(node.input),
        array: describeExpr(node.array),
        name: node.name,
        outer: node.outer ?? false,
        reads: [...node.reads],
      };
    case "sort":
      return {
        kind: "sort",
        ...shape,
        input: describe(node.input),
        keys: node.keys.map((k) => ({ ...describeExpr(k), descending: k.descending })),
        reads: [...node.reads],
        top: node.top,
      };
    case "aggregate":
      return {
        kind: "aggregate",
        ...shape,
        input: describe(node.input),
        keys: node.keys.map((k) => ({
          ...describeExpr(k),
          ...(k.field !== undefined ? { field: k.field } : {}),
        })),
        aggregates: node.aggregates.map(describeAggregate),
        outputs: node.outputs.map(describeColumn),
        reads: [...node.reads],
      };
    default:
      throw new Undescribable(node.kind);
  }
}

function describeSource(node: PlanNode & { kind: "source" }): SourceDescription {
  if (!node.scan || !node.origin) throw new Undescribable("source");
  const { reader, src, from, to } = node.origin;
  return {
    kind: "source",
    label: node.label,
    schema: node.schema,
    open: node.open ?? false,
    reader,
    src,
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    fields: node.fields,
    ...(node.paths ? { paths: [...node.paths] } : {}),
    filter: node.filter && {
      condition: describeExpr(node.filter.condition),
      negated: node.filter.negated,
      reads: [...node.filter.reads],
    },
  };
}

function describeExpr(c: Compiled): ExprDescription {
  if (!c.origin) throw new Undescribable(c.label);
  return describeOrigin(c.origin, c.label);
}

function describeOrigin(origin: ExprOrigin, label: string): ExprDescription {
  return {
    expr: mapLiterals(origin.expr, encodeValue),
    fields: origin.fields,
    params: [...origin.params].map(([name, p]) => ({
      name,
      value: encodeValue(p.value),
      type: p.type,
    })),
    label,
  };
}

function describeColumn(c: Column): ColumnDescription {
  return { ...describeExpr(c), name: c.name };
}

function describeAggregate(a: AggregateSpec): AggregateDescription {
  if (a.name === undefined || (a.arg !== null && !a.argOrigin)) {
    throw new Undescribable(a.label);
  }
  return {
    slot: a.slot,
    label: a.label,
    name: a.name,
    arg: a.argOrigin ? describeOrigin(a.argOrigin, a.label) : null,
    ...(a.params ? { params: a.params } : {}),
    ...(a.fold ? { fold: a.fold } : {}),
    ...(a.argField !== undefined ? { argField: a.argField } : {}),
  };
}

/** `expr` with each literal's value mapped (encoded for a structured clone, or decoded). */
function mapLiterals<A, B>(expr: Expr, map: (v: A) => B): Expr {
  const walk = (e: unknown): unknown => {
    if (Array.isArray(e)) return e.map(walk);
    if (e === null || typeof e !== "object") return e;
    const node = e as Record<string, unknown>;
    if (node.kind === "literal") return { ...node, value: map(node.value as A) };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === "span" ? v : walk(v);
    return out;
  };
  return walk(expr) as Expr;
}

/** What a built part needs of the worker: its clock and zone, and how to list a source. */
export interface PartBuild {
  readonly timeZone: string;
  readonly now: number;
  /** The files `src` names (between `from` and `to`), listed as the server listed them. */
  readonly list: (
    source: { src: string; from?: number; to?: number },
  ) => (ctx: ExecContext) => AsyncIterable<FileEntry>;
}

/**
 * The operators of `part`, compiled here; its source node is the one a worker reads its shares
 * through (`ExecContext.shareFiles`). Throws a QueryError where an expression does not compile
 * (it compiled on the server: a bug).
 */
export function buildPart(part: PartDescription, build: PartBuild): PlanNode {
  const expr = (d: ExprDescription): Compiled => ({
    fn: compileExpr(d, build),
    label: d.label,
  });
  // A column that is a plain field says so (a result rendered from columns reads that one).
  const column = (d: ColumnDescription): Column => ({
    ...expr(d),
    name: d.name,
    ...(d.expr.kind === "field" ? { field: d.expr.name } : {}),
  });
  switch (part.kind) {
    case "source":
      return buildSource(part, build);
    case "view":
      return {
        kind: "view",
        schema: part.schema,
        open: part.open,
        canonical: part.canonical,
        input: buildPart(part.input, build),
      };
    case "filter":
      return {
        kind: "filter",
        schema: part.schema,
        open: part.open,
        input: buildPart(part.input, build),
        condition: expr(part.condition),
        negated: part.negated,
        reads: new Set(part.reads),
      };
    case "project":
      return {
        kind: "project",
        schema: part.schema,
        open: part.open,
        input: buildPart(part.input, build),
        columns: part.columns.map(column),
        copyInput: part.copyInput,
        reads: part.reads && new Set(part.reads),
      };
    case "unnest":
      return {
        kind: "unnest",
        schema: part.schema,
        open: part.open,
        input: buildPart(part.input, build),
        array: expr(part.array),
        name: part.name,
        ...(part.outer ? { outer: true } : {}),
        reads: new Set(part.reads),
      };
    case "sort":
      return {
        kind: "sort",
        schema: part.schema,
        open: part.open,
        input: buildPart(part.input, build),
        keys: part.keys.map((k) => ({ ...expr(k), descending: k.descending })),
        reads: new Set(part.reads),
        top: part.top,
      };
    case "aggregate":
      return {
        kind: "aggregate",
        schema: part.schema,
        open: part.open,
        input: buildPart(part.input, build),
        keys: part.keys.map((k) => ({
          ...expr(k),
          ...(k.field !== undefined ? { field: k.field } : {}),
        })),
        aggregates: part.aggregates.map((a) => buildAggregate(a, build)),
        outputs: part.outputs.map(column),
        reads: new Set(part.reads),
      };
  }
}

function buildAggregate(a: AggregateDescription, build: PartBuild): AggregateSpec {
  const def = AGGREGATES.get(a.name);
  if (!def) throw new Error(`no aggregate '${a.name}'`);
  return {
    slot: a.slot,
    label: a.label,
    name: a.name,
    arg: a.arg && compileExpr(a.arg, build),
    create: () => def.create(a.params),
    ...(a.params ? { params: a.params } : {}),
    ...(a.fold ? { fold: a.fold } : {}),
    ...(a.argField !== undefined ? { argField: a.argField } : {}),
  };
}

function compileExpr(d: ExprDescription, build: PartBuild) {
  const scope = {
    fields: d.fields === null ? null : new Map(d.fields.map((f) => [f.name, f])),
    params: new Map(d.params.map((p) => [p.name, { value: decodeValue(p.value), type: p.type }])),
    timeZone: build.timeZone,
    now: build.now,
  };
  return typeExpr(mapLiterals<Encoded, Value>(d.expr, decodeValue), scope).fn;
}

function buildSource(part: SourceDescription, build: PartBuild): PlanNode {
  const list = build.list(part);
  let filter: SourceFilter | null = null;
  if (part.filter) {
    const { negated } = part.filter;
    const d = part.filter.condition;
    const condition = compileExpr(d, build);
    filter = {
      condition: {
        fn: condition,
        label: d.label,
        // What it was compiled from: the column cache's zone maps read its bounds.
        origin: {
          expr: mapLiterals<Encoded, Value>(d.expr, decodeValue),
          fields: d.fields,
          params: new Map(
            d.params.map((p) => [p.name, { value: decodeValue(p.value), type: p.type }]),
          ),
        },
      },
      negated,
      reads: new Set(part.filter.reads),
      // As engine/planning/passes/push_filters.ts: null is not true.
      keep: (row) => (condition(row) === true) !== negated,
    };
  }
  let scan: SourceScan;
  if (part.reader.kind === "PARSE") {
    const subPatterns = new Map(part.reader.subPatterns);
    const compiled = compilePattern(part.reader.pattern, {
      timeZone: part.reader.timeZone ?? build.timeZone,
      records: false,
      subPatterns: (name) => subPatterns.get(name),
    });
    if (!compiled.ok) throw new Error(`the pattern does not compile: ${compiled.message}`);
    const pattern = compiled.pattern;
    const spec = [
      part.reader.pattern,
      [...part.reader.subPatterns].sort(),
      part.reader.timeZone ?? build.timeZone,
    ];
    const ignore = part.reader.ignoreUnmatched === true;
    const quiet = (ctx: ExecContext) => ignore ? { ...ctx, ignoreUnmatched: true } : ctx;
    // With `line_field:`/`raw_field:` a line a record, read raw, each share counting the lines
    // before it (as engine/planning/source_calls.ts plans it in the query's thread).
    const extra = part.reader.extra;
    scan = {
      list,
      lines: () => Promise.resolve(!pattern.multiLine),
      read: (shares, ctx, read) =>
        extra
          ? parseRecordsSource(
            shares,
            pattern,
            read.fields,
            quiet(ctx),
            EVERY_LINE,
            read.filter ?? undefined,
            extra,
          )
          : readParse(shares, pattern, spec, quiet(ctx), read),
    };
  } else {
    // With `line_field:`/`raw_field:` read raw, each share counting the lines before it.
    const extra = part.reader.extra;
    scan = {
      list,
      lines: () => Promise.resolve(true),
      read: (shares, ctx, read) =>
        warnAbsentFields(
          "READ_JSON",
          read.fields,
          read.filter?.keep,
          ctx,
          (keep) =>
            extra
              ? readJsonSource(shares, read.fields, ctx, keep, read.paths, extra)
              : readJson(shares, ctx, read.fields, keep, read.paths),
          true,
        ),
    };
  }
  return {
    kind: "source",
    schema: part.schema,
    ...(part.open ? { open: true } : {}),
    label: part.label,
    start: () => {
      throw new Error("a worker reads its shares of a source only");
    },
    takes: { fields: true, filter: true },
    fields: part.fields,
    filter,
    ...(part.paths ? { paths: new Map(part.paths) } : {}),
    scan,
  };
}
