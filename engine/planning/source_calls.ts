/**
 * The reading sources `LIST(src: ...)`, `READ_JSON(src: ...)`, `PARSE(pattern: ..., src: ...)`:
 * arguments are constants evaluated at compile time; the datastore is found at compile time
 * (so an unknown store or a missing license is a diagnostic) and listed when the plan runs.
 */

import type { NamedExpr, Source } from "../front/ast.ts";
import {
  type Datastore,
  DATASTORES_FOLDER,
  definitionRefusal,
  type FileEntry,
  type ListOptions,
  readByWorkers,
} from "../contracts/datastore.ts";
import { isWithin } from "../contracts/resource_path.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import { unmatchedWarning } from "../exec/unmatched.ts";
import {
  EVERY_LINE,
  parseRecordsSource,
  UNMATCHED_SCHEMA,
  unmatchedSource,
} from "../exec/parse_records.ts";
import { parseOptions, patternArgument, subPatterns } from "./parse_options.ts";
import { readTableSource, type RecordExtras } from "../exec/read_table_source.ts";
import { readJsonSource } from "../exec/read_json_source.ts";
import { warnAbsentFields } from "../exec/absent_fields.ts";
import { filesOneAtATime, withPathField } from "../exec/path_field.ts";
import { type Field, scalar } from "../values/types.ts";
import { isValidZone } from "../values/time.ts";
import { tableFormat } from "./table_options.ts";
import { QueryError } from "../front/diagnostics.ts";
import { placeInString } from "../front/lexer.ts";
import type { OpenSource, PlanNode, SourceOrigin, SourceRead, SourceScan } from "../plan/plan.ts";
import type { ExecContext } from "../plan/context.ts";
import { LIST_SCHEMA, listSource } from "../exec/list_source.ts";
import { isJsonLines, readJson, readParse, readTable } from "../exec/cached_sources.ts";
import type { Value } from "../values/values.ts";
import { Timestamp } from "../values/values.ts";
import { type PlanEnv, report } from "./env.ts";
import { constant } from "./expressions.ts";
import { lookupSource, type SourceSignature } from "../front/source_catalog.ts";

type SourceCall = Source & { kind: "sourceCall" };

/**
 * A source as planned reads every field and row; the passes (engine/planning/passes/) narrow
 * what those that take it read.
 */
const TAKES_ALL = { takes: { fields: true, filter: true }, fields: null, filter: null } as const;
const TAKES_NOTHING = {
  takes: { fields: false, filter: false },
  fields: null,
  filter: null,
} as const;

interface CallArgs {
  readonly src: string;
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly values: ReadonlyMap<string, { value: Value; expr: NamedExpr }>;
}

function evaluateArgs(
  env: PlanEnv,
  call: SourceCall,
  sig: SourceSignature,
): CallArgs | undefined {
  const name = sig.name;
  const allowed = [...sig.required, ...sig.optional];
  const values = new Map<string, { value: Value; expr: NamedExpr }>();
  let ok = true;
  for (const a of call.args) {
    if (!allowed.includes(a.name)) {
      report(
        env,
        "BAD_ARGUMENT",
        `${name} has no argument '${a.name}' (it takes ${allowed.join(", ")})`,
        a.span,
      );
      ok = false;
      continue;
    }
    const c = constant(env, a.value);
    if (!c) ok = false;
    else values.set(a.name, { value: c.value, expr: a });
  }
  if (!ok) return undefined;
  const src = values.get("src");
  if (!src || typeof src.value !== "string") {
    report(
      env,
      "BAD_ARGUMENT",
      `${name} needs src: a path or URI as a string`,
      src?.expr.span ?? call.span,
    );
    return undefined;
  }
  // Refused when the files are listed too; said here, a script's check (`POST /check`) tells it.
  const dots = src.value.replace(/^[a-z]+:\/\//i, "").split("/").find((s) =>
    s === "." || s === ".."
  );
  if (dots !== undefined) {
    report(
      env,
      "NOT_FOUND",
      `${name} src '${src.value}': '${dots}' segments are not allowed`,
      src.expr.span,
    );
    return undefined;
  }
  if (readsDefinitions(env, src.value)) {
    report(env, "FORBIDDEN", definitionRefusal(src.value, "queries"), src.expr.span);
    return undefined;
  }
  const bound = (key: "from" | "to"): number | undefined | false => {
    const v = values.get(key);
    if (!v || v.value === null) return undefined;
    if (v.value instanceof Timestamp) return v.value.ms;
    report(env, "TYPE_ERROR", `${name} argument '${key}' must be a TIMESTAMP`, v.expr.span);
    return false;
  };
  const from = bound("from"), to = bound("to");
  if (from === false || to === false) return undefined;
  return { src: src.value, from, to, values };
}

/**
 * Does the tree path `src` name the datastore definitions (all it can match is in their folder)?
 * Said when the script is planned; connectors/file/tree_store.ts refuses it too, and walks a
 * wider glob past them untold.
 */
function readsDefinitions(env: PlanEnv, src: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(src)) return false;
  const parts = src.split("/").filter((p) => p !== "");
  // The folders before the first glob, as connectors/glob.ts takes its base.
  const literal = (p: string) => !/[*?]|\$(yyyy|MM|dd|HH|mm)\$/.test(p);
  let i = 0;
  while (i < parts.length - 1 && literal(parts[i]!)) i++;
  try {
    const { tree, user } = env.query;
    const base = (src.startsWith("/") ? "/" : "") + parts.slice(0, i).join("/");
    const canonical = tree.resolve(user, base === "" ? env.workDir : base, env.workDir).canonical;
    return isWithin(canonical, DATASTORES_FOLDER);
  } catch {
    return false; // a malformed path is refused when its files are listed
  }
}

/**
 * Lists the files of `args.src` at run time, with the query's warnings and progress; once per
 * query: files this lister gave already (`ctx.listed`) are handed out again without a listing.
 */
function lister(env: PlanEnv, store: Datastore, args: CallArgs) {
  const { user, timeZone } = env.query;
  const workDir = env.workDir;
  const list = (ctx: ExecContext): AsyncIterable<FileEntry> => {
    const listed = ctx.listed?.get(list);
    if (listed) return fromArray(listed);
    const options: ListOptions = {
      user,
      workDir,
      timeZone,
      signal: ctx.signal,
      onWarning: ctx.warn,
      onProgress: (f) => ctx.progress.prepare(`list ${args.src}`, 1 << 20, f),
      ...(ctx.stats
        ? {
          onRequest: () => ctx.stats!.cloudRequests++,
          onLost: (n: number) => ctx.stats!.cloudLost += n,
        }
        : {}),
      ...(args.from !== undefined ? { from: args.from } : {}),
      ...(args.to !== undefined ? { to: args.to } : {}),
    };
    return store.list(args.src, options);
  };
  return list;
}

async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

export async function planSourceCall(
  env: PlanEnv,
  call: SourceCall,
): Promise<PlanNode | undefined> {
  const sig = lookupSource(call.name);
  if (!sig || sig.later) {
    report(env, "UNKNOWN_NAME", `the source ${call.name} is not supported yet`, call.span);
    return undefined;
  }
  const name = sig.name;
  const args = evaluateArgs(env, call, sig);
  if (!args) return undefined;
  let store: Datastore;
  try {
    store = await env.query.datastores.forUri(args.src, env.query.user);
  } catch (e) {
    if (!(e instanceof QueryError)) throw e;
    report(env, e.diagnostic.code, e.diagnostic.message, call.span);
    return undefined;
  }
  const { files, onFile } = filesOneAtATime(lister(env, store, args));
  const pathField = fieldNameArgument(env, args, "path_field", "each row's file");
  if (pathField === false) return undefined;
  const named = ["path_field", "line_field", "raw_field"] as const;
  for (const [i, key] of named.entries()) {
    const a = args.values.get(key)?.value;
    const twin = named.slice(0, i).find((k) => a != null && args.values.get(k)?.value === a);
    if (twin !== undefined) {
      report(
        env,
        "BAD_ARGUMENT",
        `${name} ${twin} and ${key} name the same field '${a}'; choose another name`,
        args.values.get(key)!.expr.span,
      );
      return undefined;
    }
  }
  const node = await planFileSource(env, call, name, args, files);
  if (!node || pathField === undefined || name === "LIST") return node;
  if (node.kind !== "source") return node;
  if (!node.open && node.schema.some((f) => f.name === pathField)) {
    report(
      env,
      "BAD_ARGUMENT",
      `${name} path_field '${pathField}' is also a field of the pattern; choose another name`,
      args.values.get("path_field")!.expr.span,
    );
    return undefined;
  }
  const { scan: _scan, origin: _origin, ...plain } = node;
  return {
    ...plain,
    schema: [...node.schema, { name: pathField, type: scalar("STRING"), nullable: false }],
    label: `${node.label.slice(0, -1)}, path_field: '${pathField}')`,
    start: withPathField(node.start, files, onFile, pathField, {
      label: name,
      open: node.open === true,
    }),
    takes: { fields: node.takes.fields, filter: false },
  };
}

/**
 * The field name an argument such as `path_field:` asks for; undefined when not asked, false
 * after a reported mistake.
 */
function fieldNameArgument(
  env: PlanEnv,
  args: CallArgs,
  key: "path_field" | "raw_field" | "line_field",
  what: string,
): string | undefined | false {
  const a = args.values.get(key);
  if (!a || a.value === null) return undefined;
  if (typeof a.value !== "string" || a.value === "" || a.value.length > 128) {
    report(
      env,
      "BAD_ARGUMENT",
      `${key} must be the name of the field to hold ${what}, such as '_${key.split("_")[0]}'`,
      a.expr.span,
    );
    return false;
  }
  return a.value;
}

/**
 * `line_field:` and `raw_field:` of READ_JSON, READ_CSV, READ_W3C and READ_ZEEK (PARSE reads its
 * own): the fields asked for, with their place in the schema and the label; undefined when none
 * is asked for, false after a reported mistake.
 */
function recordExtras(
  env: PlanEnv,
  args: CallArgs,
): { extra: RecordExtras; fields: Field[]; label: string } | undefined | false {
  const raw = fieldNameArgument(env, args, "raw_field", "each record's text");
  const line = fieldNameArgument(env, args, "line_field", "each record's line number");
  if (raw === false || line === false) return false;
  if (raw === undefined && line === undefined) return undefined;
  return {
    extra: { ...(raw ? { raw } : {}), ...(line ? { line } : {}) },
    fields: [
      ...(line ? [{ name: line, type: scalar("LONG"), nullable: false }] : []),
      ...(raw ? [{ name: raw, type: scalar("STRING"), nullable: false }] : []),
    ],
    label: `${line ? `, line_field: '${line}'` : ""}${raw ? `, raw_field: '${raw}'` : ""}`,
  };
}

async function planFileSource(
  env: PlanEnv,
  call: SourceCall,
  name: string,
  args: CallArgs,
  files: (ctx: ExecContext) => AsyncIterable<FileEntry>,
): Promise<PlanNode | undefined> {
  const label = `${name}(src: '${args.src}')`;
  switch (name) {
    case "LIST": {
      const start: OpenSource = (ctx) => listSource(files(ctx), ctx);
      return { kind: "source", schema: LIST_SCHEMA, label, start, ...TAKES_NOTHING };
    }
    case "READ_JSON": {
      const asked = recordExtras(env, args);
      if (asked === false) return undefined;
      if (asked) {
        // Each record's line and text: read raw (not from the column cache); a share of a file
        // of JSON lines counts the lines before it (read_json_source.ts, firstLineOf).
        const open = (shares: boolean) =>
        (ctx: ExecContext, read: SourceRead) =>
        (
          all: AsyncIterable<FileEntry> | Iterable<FileEntry>,
        ) =>
          warnAbsentFields(
            name,
            read.fields,
            read.filter?.keep,
            ctx,
            (keep) => readJsonSource(all, read.fields, ctx, keep, read.paths, asked.extra),
            shares,
          );
        const scan: SourceScan = {
          list: files,
          lines: (file, signal) => isJsonLines(file, signal),
          read: (shares, ctx, read) => open(true)(ctx, read)(shares),
        };
        return {
          kind: "source",
          schema: asked.fields,
          open: true,
          label: `${label.slice(0, -1)}${asked.label})`,
          start: (ctx, read) => open(false)(ctx, read)(files(ctx)),
          ...TAKES_ALL,
          ...(readByWorkers(args.src)
            ? {
              scan,
              origin: sourceOrigin({ kind: "READ_JSON", extra: asked.extra }, args),
            }
            : {}),
        };
      }
      const start: OpenSource = (ctx, read) =>
        warnAbsentFields(
          name,
          read.fields,
          read.filter?.keep,
          ctx,
          (keep) => readJson(files(ctx), ctx, read.fields, keep, read.paths),
        );
      const scan: SourceScan = {
        list: files,
        // A file that is one JSON array, or objects across lines, is read whole; JSON lines may
        // be cut.
        lines: (file, signal) => isJsonLines(file, signal),
        read: (shares, ctx, read) =>
          warnAbsentFields(
            name,
            read.fields,
            read.filter?.keep,
            ctx,
            (keep) => readJson(shares, ctx, read.fields, keep, read.paths),
            true,
          ),
      };
      return {
        kind: "source",
        schema: [],
        open: true,
        label,
        start,
        ...TAKES_ALL,
        ...(readByWorkers(args.src)
          ? { scan, origin: sourceOrigin({ kind: "READ_JSON" }, args) }
          : {}),
      };
    }
    case "READ_CSV":
    case "READ_W3C":
    case "READ_ZEEK": {
      const format = tableFormat(env, name, args.values);
      if (!format) return undefined;
      const asked = recordExtras(env, args);
      if (asked === false) return undefined;
      const start: OpenSource = (ctx, read) =>
        warnAbsentFields(
          name,
          read.fields,
          read.filter?.keep,
          ctx,
          (keep) =>
            asked
              ? readTableSource(files(ctx), format, read.fields, ctx, keep, asked.extra)
              : readTable(files(ctx), format, read.fields, ctx, keep),
        );
      return {
        kind: "source",
        schema: asked?.fields ?? [],
        open: true,
        label: asked ? `${label.slice(0, -1)}${asked.label})` : label,
        start,
        ...TAKES_ALL,
        // Line and raw fields are read from the bytes, never from the cache.
        ...(!asked ? { cached: true } : {}),
      };
    }
    default:
      return await planParse(env, call, args, files);
  }
}

async function planParse(
  env: PlanEnv,
  call: SourceCall,
  args: CallArgs,
  files: (ctx: ExecContext) => AsyncIterable<FileEntry>,
): Promise<PlanNode | undefined> {
  const arg = await patternArgument(env, call, args.values);
  if (!arg) return undefined;
  const options = parseOptions(env, args.values);
  if (!options) return undefined;
  const records = options.records;
  // `zone:` the zone of the source's times that carry none (else the query's).
  const zoneArg = args.values.get("zone");
  let zone = env.query.timeZone;
  if (zoneArg && zoneArg.value !== null) {
    if (typeof zoneArg.value !== "string" || !isValidZone(zoneArg.value)) {
      report(
        env,
        "BAD_ARGUMENT",
        `PARSE zone must be an IANA zone name such as 'Europe/Tallinn' or 'UTC', found ${
          JSON.stringify(zoneArg.value)
        }`,
        zoneArg.expr.span,
      );
      return undefined;
    }
    zone = zoneArg.value;
  }
  // The sub-patterns it names, kept for the scan workers that compile it again.
  const named = subPatterns(env);
  const used = new Map<string, string>();
  const compiled = compilePattern(arg.text, {
    timeZone: zone,
    records: records !== null,
    subPatterns: (name) => {
      const text = named(name);
      if (text !== undefined) used.set(name, text);
      return text;
    },
  });
  if (!compiled.ok) {
    report(
      env,
      "SYNTAX_ERROR",
      `in the ${arg.what} at offset ${compiled.offset}: ${compiled.message}`,
      arg.quoted
        ? { ...arg.span, ...placeInString(arg.span, arg.quoted, compiled.offset) }
        : arg.span,
    );
    return undefined;
  }
  const pattern = compiled.pattern;
  // `raw_field:` the record's text, `line_field:` its first line's number, beside its fields.
  const raw = fieldNameArgument(env, args, "raw_field", "each record's text");
  const line = fieldNameArgument(env, args, "line_field", "each record's line number");
  if (raw === false || line === false) return undefined;
  const extra = { ...(raw ? { raw } : {}), ...(line ? { line } : {}) };
  const extras: Field[] = [
    ...(raw ? [{ name: raw, type: scalar("STRING"), nullable: false }] : []),
    ...(line ? [{ name: line, type: scalar("LONG"), nullable: false }] : []),
  ];
  for (const f of extras) {
    if (pattern.fields.some((p) => p.name === f.name) || (raw === line)) {
      report(
        env,
        "BAD_ARGUMENT",
        `PARSE ${f === extras[0] && raw ? "raw_field" : "line_field"} '${f.name}' is ` +
          `${raw === line ? "given twice" : "also a field of the pattern"}; choose another name`,
        call.span,
      );
      return undefined;
    }
  }
  if (extras.length > 0 && records === null && pattern.multiLine) {
    report(
      env,
      "BAD_ARGUMENT",
      "PARSE raw_field and line_field need records: a pattern over several lines needs " +
        "record_start, which says where each begins",
      call.span,
    );
    return undefined;
  }
  const cut = records ?? (extras.length > 0 ? EVERY_LINE : null);
  if (options.unmatched) {
    const start: OpenSource = (ctx) => unmatchedSource(files(ctx), pattern, records, ctx);
    const label = `PARSE(src: '${args.src}', unmatched: true)`;
    return { kind: "source", schema: UNMATCHED_SCHEMA, label, start, ...TAKES_NOTHING };
  }
  // What the column cache keys the pattern by: its text, the sub-patterns it used and the zone
  // of its zone-less times.
  const spec = [arg.text, [...used].sort(), zone];
  const ignore = options.ignoreUnmatched;
  const quiet = <C extends ExecContext>(ctx: C): C =>
    ignore ? { ...ctx, ignoreUnmatched: true } : ctx;
  const start: OpenSource = cut !== null
    ? (ctx, read) =>
      parseRecordsSource(
        files(ctx),
        pattern,
        read.fields,
        quiet(ctx),
        cut,
        read.filter ?? undefined,
        extra,
      )
    : (ctx, read) => readParse(files(ctx), pattern, spec, quiet(ctx), read);
  // Records that start where a pattern says are read by one thread only (a record may span any
  // cut); line records may be shared among workers, and with their line or text too (each share
  // counting the lines before it, read raw, not from the column cache).
  const skipped: SourceScan["skipped"] = (all, tally, ctx) =>
    unmatchedWarning(all, tally.first.uri, tally.count, pattern, ctx);
  const scan: SourceScan | undefined = records !== null ? undefined : cut === EVERY_LINE
    ? {
      list: files,
      lines: () => Promise.resolve(true),
      read: (shares, ctx, read) =>
        parseRecordsSource(
          shares,
          pattern,
          read.fields,
          quiet(ctx),
          EVERY_LINE,
          read.filter ?? undefined,
          extra,
        ),
      skipped,
    }
    : {
      list: files,
      // A record of a multi-line pattern may span a cut: such files are read whole.
      lines: () => Promise.resolve(!pattern.multiLine),
      read: (shares, ctx, read) => readParse(shares, pattern, spec, quiet(ctx), read),
      skipped,
    };
  return {
    kind: "source",
    schema: [...pattern.fields, ...extras],
    label: `PARSE(src: '${args.src}'${ignore ? ", unmatched: 'ignore'" : ""}${
      raw ? `, raw_field: '${raw}'` : ""
    }${line ? `, line_field: '${line}'` : ""})`,
    start,
    ...TAKES_ALL,
    ...(scan && readByWorkers(args.src)
      ? {
        scan,
        origin: sourceOrigin({
          kind: "PARSE",
          pattern: arg.text,
          subPatterns: [...used],
          ...(ignore ? { ignoreUnmatched: true } : {}),
          ...(zone !== env.query.timeZone ? { timeZone: zone } : {}),
          ...(extras.length > 0 ? { extra } : {}),
        }, args),
      }
      : {}),
  };
}

function sourceOrigin(reader: SourceOrigin["reader"], args: CallArgs): SourceOrigin {
  return {
    reader,
    src: args.src,
    ...(args.from !== undefined ? { from: args.from } : {}),
    ...(args.to !== undefined ? { to: args.to } : {}),
  };
}
