/**
 * From a checked script to a plan: statements in order, `$x` constants evaluated, `@x` streams
 * bound to their plans (reused by reference: a stream used twice is computed twice), the last
 * pipeline is the result. Mistakes found here (unknown fields, type clashes, bad arguments,
 * rights) are diagnostics with line and column; planning goes on to report them all.
 */

import type { Command, Expr, Pipeline, Script, Source, Span } from "../front/ast.ts";
import { assertNever } from "../front/ast.ts";
import { childrenOf, type PlanNode } from "../plan/plan.ts";
import { type Field, type Type, widenSchema } from "../values/types.ts";
import type { Value } from "../values/values.ts";
import { type PlanEnv, report } from "./env.ts";
import { constant, FieldReads, fieldsRead, typed } from "./expressions.ts";
import { containsAggregate, planAggregate, planProject } from "./select.ts";
import { planValues } from "./values.ts";
import { planJoin } from "./join.ts";
import { planSave } from "./save.ts";
import { planWindow } from "./window.ts";
import { planSourceCall } from "./source_calls.ts";
import { existingFile, resolvePath } from "./paths.ts";
import { CorruptTable, readTableSchema } from "../table/table_reader.ts";
import { MAX_PIPELINE_OPERATORS } from "../front/checker.ts";
import { operatorCount } from "./operator_count.ts";
import { type ArgumentInput, bindArguments, loadView, SCRIPT_RIGHTS, viewEnv } from "./views.ts";
import { hyphenatedNames } from "./hyphenated_names.ts";

/**
 * Plans `script` in `env` with its arguments (`caller` hears about bad ones). Undefined when
 * there were diagnostics.
 */
export async function planScript(
  env: PlanEnv,
  script: Script,
  options: { args: ArgumentInput; caller?: PlanEnv; span?: Span },
): Promise<PlanNode | undefined> {
  const before = env.diagnostics.length;
  let result: PlanNode | null | undefined = undefined;
  const init = script.statements.find((s) => s.kind === "init");
  const args = options.args;
  const hasArgs = args.kind === "text"
    ? Object.keys(args.values).length > 0
    : args.values.length > 0;
  if (init || hasArgs || args.kind === "values") {
    const params = init?.kind === "init" ? init.params : [];
    // The script is not planned with arguments missing: its uses of them would only add noise.
    if (!bindArguments(env, params, args, options.caller ?? env)) return undefined;
  }
  // Pipeline statements that save a table run before the result even when they are not it:
  // their effect is the point (a bound stream runs only where it is used).
  const effects: PlanNode[] = [];
  for (const statement of script.statements) {
    switch (statement.kind) {
      case "init":
        break;
      case "let": {
        const c = constant(env, statement.value);
        const v = statement.value;
        // A pattern's mistake is placed in the literal that holds it (parse_options.ts).
        const written = c && v.kind === "literal" && v.quoted
          ? { written: { span: v.span, quoted: v.quoted } }
          : {};
        // A failed constant stays bound (to null) so later uses report nothing more.
        env.params.set(
          statement.name,
          c ? { ...c, ...written } : { value: null, type: { kind: "NULL" } },
        );
        break;
      }
      case "bind": {
        const node = await planPipeline(env, statement.pipeline);
        env.streams.set(statement.name, node ?? null);
        result = node ?? null;
        break;
      }
      case "pipeline":
        result = (await planPipeline(env, statement.pipeline)) ?? null;
        if (result && saves(result)) effects.push(result);
        break;
      default:
        assertNever(statement);
    }
  }
  if (result === undefined) {
    report(
      env,
      "NO_RESULT",
      "the script has no pipeline, so it has no result: end it with one such as VALUES((a: 1)) | select(a)",
      options.span,
    );
  }
  if (env.diagnostics.length > before || !result) return undefined;
  const earlier = effects.filter((n) => n !== result);
  if (earlier.length === 0) return result;
  return {
    kind: "after",
    schema: result.schema,
    open: result.open,
    before: earlier,
    input: result,
  };
}

async function planSource(env: PlanEnv, source: Source): Promise<PlanNode | undefined> {
  switch (source.kind) {
    case "streamRef": {
      const node = env.streams.get(source.name);
      if (node === undefined) {
        report(
          env,
          "UNKNOWN_NAME",
          `the stream @${source.name} is not bound before this use`,
          source.span,
        );
      }
      return node ?? undefined;
    }
    case "values":
      return planValues(env, source);
    case "sourceCall":
      return await planSourceCall(env, source);
    case "stored":
      return await planStored(env, source);
    default:
      return assertNever(source);
  }
}

async function planStored(
  env: PlanEnv,
  source: Source & { kind: "stored" },
): Promise<PlanNode | undefined> {
  const path = source.path;
  if (path.endsWith(".sxt")) {
    if (source.args !== null) {
      report(env, "BAD_ARGUMENT", `the stored table ${path} takes no arguments`, source.span);
      return undefined;
    }
    const planned = savedEarlier(env, path, source.span);
    if (planned !== undefined) return planned ?? undefined;
    const file = await existingFile(env, path, {
      right: "read",
      what: "stored table",
      span: source.span,
    });
    if (!file) return undefined;
    try {
      const schema = await readTableSchema(file.files, file.real, file.canonical);
      return { kind: "table", schema, ...file };
    } catch (e) {
      // A corrupt table is there (and seen): it says so. Anything else (it went away meanwhile)
      // is told without the system's message, which would name the host path.
      if (e instanceof CorruptTable) report(env, "CORRUPT_TABLE", e.message, source.span);
      else {report(
          env,
          "NOT_FOUND",
          `the stored table ${file.canonical} cannot be read`,
          source.span,
        );}
      return undefined;
    }
  }
  if (!path.endsWith(".sx")) {
    report(
      env,
      "NOT_FOUND",
      `@[${path}] must name a stored table (.sxt) or a stored script (.sx)`,
      source.span,
    );
    return undefined;
  }
  const file = await existingFile(env, path, {
    right: SCRIPT_RIGHTS,
    what: "stored script",
    span: source.span,
  });
  if (!file) return undefined;
  const script = await loadView(env, file, source.span);
  if (!script) return undefined;
  const values: { name: string; value: Value; type: Type; span: Span }[] = [];
  for (const a of source.args ?? []) {
    const c = constant(env, a.value);
    if (!c) return undefined;
    values.push({ name: a.name, ...c, span: a.span });
  }
  const inner = viewEnv(env, file.canonical);
  const before = env.diagnostics.length;
  const node = await planScript(inner, script, {
    args: { kind: "values", values, span: source.span },
    caller: env,
  });
  if (!node || env.diagnostics.length > before) return undefined;
  return {
    kind: "view",
    schema: node.schema,
    open: node.open,
    canonical: file.canonical,
    input: node,
  };
}

/**
 * The table an earlier statement of the script saves at `path` (its schema is that statement's),
 * null after a diagnostic, undefined when no statement saves there.
 */
function savedEarlier(env: PlanEnv, path: string, span: Span): PlanNode | null | undefined {
  const resolved = resolvePath(env, path, span);
  if (!resolved) return null;
  const saved = env.saved?.get(resolved.canonical);
  if (!saved) return undefined;
  if (!env.query.tree.may(env.query.user, "read", resolved.canonical)) {
    report(env, "FORBIDDEN", `you may not read the stored table ${resolved.canonical}`, span);
    return null;
  }
  return {
    kind: "table",
    schema: saved.schema,
    canonical: resolved.canonical,
    real: saved.real,
    files: env.query.tree,
  };
}

/** Does `node` save a table somewhere in its tree? */
function saves(node: PlanNode): boolean {
  return node.kind === "save" || childrenOf(node).some(saves);
}

/** Plans a pipeline; undefined after reporting its first mistake. */
export async function planPipeline(
  env: PlanEnv,
  pipeline: Pipeline,
): Promise<PlanNode | undefined> {
  let node = await planSource(env, pipeline.source);
  const commands = pipeline.commands;
  for (let i = 0; i < commands.length && node; i++) {
    // Over fields known only from the data, `log-status` is a name (hyphenated_names.ts).
    const named = node.open ? hyphenatedNames : (c: Command) => c;
    const command = named(commands[i]!);
    const following = commands[i + 1];
    const next = following && named(following);
    if (command.kind === "select") {
      const group = next?.kind === "group" ? next : null;
      if (group || command.items.some((item) => containsAggregate(item.expr))) {
        node = planAggregate(env, node, command, group);
        if (group) i++;
      } else node = planProject(env, node, command);
      continue;
    }
    node = await planCommand(env, node, command);
  }
  return node && withinOperatorLimit(env, node, pipeline) ? node : undefined;
}

/**
 * The checker bounds a pipeline with the streams it reads; the stored scripts it calls (with
 * theirs) count here, once planned and before a pass copies a shared node per use: a view that
 * reads a view twice doubles at each level, and 30 such levels would be 2^29 operators.
 */
function withinOperatorLimit(env: PlanEnv, node: PlanNode, pipeline: Pipeline): boolean {
  const size = operatorCount(node);
  if (size <= MAX_PIPELINE_OPERATORS) return true;
  report(
    env,
    "SYNTAX_ERROR",
    `pipeline too long: ${size} operators, counting those of the streams and stored scripts ` +
      `it reads, more than ${MAX_PIPELINE_OPERATORS}; save an intermediate result as a table, ` +
      `or combine commands`,
    pipeline.span,
  );
  return false;
}

async function planCommand(
  env: PlanEnv,
  input: PlanNode,
  command: Command,
): Promise<PlanNode | undefined> {
  const open = input.open;
  switch (command.kind) {
    case "select":
      return planProject(env, input, command);
    case "group":
      report(
        env,
        "TYPE_ERROR",
        "group must follow a select with aggregates, e.g. select(host, count(*)) | group(host)",
        command.span,
      );
      return undefined;
    case "filter": {
      const t = typed(env, command.condition, input);
      if (!t) return undefined;
      if (!["BOOLEAN", "NULL", "ANY"].includes(t.type.kind)) {
        report(
          env,
          "TYPE_ERROR",
          `the condition of filter must be BOOLEAN, found ${t.type.kind}`,
          command.condition.span,
        );
        return undefined;
      }
      return {
        kind: "filter",
        schema: input.schema,
        open,
        input,
        condition: t,
        negated: command.negated,
        reads: fieldsRead(command.condition),
      };
    }
    case "sort": {
      const keys = [];
      const reads = new FieldReads();
      for (const k of command.keys) {
        let expr = k.expr;
        if (expr.kind === "position") {
          const field = input.schema[expr.index - 1];
          if (!field) {
            report(
              env,
              "UNKNOWN_NAME",
              `sort position @${expr.index} is out of range: the input has ${input.schema.length} fields`,
              expr.span,
            );
            return undefined;
          }
          expr = { kind: "field", name: field.name, span: expr.span };
        }
        const t = typed(env, expr, input);
        if (!t) return undefined;
        fieldsRead(expr, reads);
        keys.push({ ...t, descending: k.descending });
      }
      return { kind: "sort", schema: input.schema, open, input, keys, reads, top: null };
    }
    case "limit": {
      const count = wholeNumber(env, command.count, "the count of limit");
      const offset = command.offset ? wholeNumber(env, command.offset, "the offset of limit") : 0;
      if (count === undefined || offset === undefined) return undefined;
      return { kind: "limit", schema: input.schema, open, input, count, offset };
    }
    case "join": {
      const right = await planSource(env, command.right);
      if (!right) return undefined;
      const node = planJoin(env, input, right, command);
      if (node && (input.open || right.open)) {
        return { ...node, open: true, rightNames: null } as PlanNode;
      }
      return node;
    }
    case "union": {
      const inputs = [input];
      for (const s of command.sources) {
        const n = await planSource(env, s);
        if (!n) return undefined;
        inputs.push(n);
      }
      const schema = inputs.slice(1).reduce((acc, n) => widenSchema(acc, n.schema), input.schema);
      return { kind: "union", schema, open: inputs.some((n) => n.open), inputs };
    }
    case "unnest": {
      const t = typed(env, command.field, input);
      if (!t) return undefined;
      if (!["ARRAY", "ANY", "NULL"].includes(t.type.kind)) {
        report(
          env,
          "TYPE_ERROR",
          `unnest needs an ARRAY, found ${t.type.kind}`,
          command.field.span,
        );
        return undefined;
      }
      const name = command.alias ?? (command.field.kind === "field" ? command.field.name : "f_1");
      const element: Field = {
        name,
        type: t.type.kind === "ARRAY" ? t.type.element : t.type,
        nullable: true,
      };
      const schema = input.schema.some((f) => f.name === name)
        ? input.schema.map((f) => (f.name === name ? element : f))
        : [...input.schema, element];
      return {
        kind: "unnest",
        schema,
        open,
        input,
        array: t,
        name,
        ...(command.outer ? { outer: true } : {}),
        reads: fieldsRead(command.field),
      };
    }
    case "window":
      return planWindow(env, input, command);
    case "save": {
      const node = await planSave(env, input, command);
      return node && { ...node, open };
    }
    default:
      return assertNever(command);
  }
}

function wholeNumber(env: PlanEnv, expr: Expr, what: string): number | undefined {
  const c = constant(env, expr);
  if (!c) return undefined;
  if (typeof c.value !== "number" || !Number.isInteger(c.value) || c.value < 0) {
    report(env, "TYPE_ERROR", `${what} must be a whole number of 0 or more`, expr.span);
    return undefined;
  }
  return c.value;
}
