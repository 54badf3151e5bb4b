/**
 * Stored scripts (views): loading one for a run or for `@[script.sx](args)`, detecting a view
 * that calls itself, and binding its `init` arguments, given as strings (the API's query
 * string, parsed by their declared type) or as values (a call in another script).
 */

import { dirname } from "node:path";
import type { Param, Script, Span } from "../front/ast.ts";
import { check } from "../front/front.ts";
import { parseLiteralOfType } from "../values/literal.ts";
import { isNumeric, sameType, scalarByName, type Type, typeToString } from "../values/types.ts";
import { Interval, IpAddr, IpNet, Timestamp, type Value } from "../values/values.ts";
import type { Right, TreeFiles } from "../contracts/resource_tree.ts";
import { toText } from "../render/render.ts";
import { type PlanEnv, report } from "./env.ts";
import { constant } from "./expressions.ts";

/**
 * The rights running a stored script takes, at the top or called from another script: execute,
 * and read, because running a file shows what it says (a syntax error quotes it).
 */
export const SCRIPT_RIGHTS: readonly Right[] = ["execute", "read"];

/**
 * Stored scripts called one inside another (a script run by its path is the first): each level
 * nests the plan once more, and the passes over a plan recurse through the nesting.
 */
export const MAX_VIEW_DEPTH = 50;

/** Arguments of a stored script run. */
export type ArgumentInput =
  | {
    readonly kind: "text";
    readonly values: Readonly<Record<string, string>>;
    /**
     * A missing mandatory argument takes a stand-in value of its type instead of being a
     * mistake: a view being written (`POST /check`) has no values yet, and the rest of it is
     * still checked and planned.
     */
    readonly standIns?: boolean;
  }
  | {
    readonly kind: "values";
    readonly values: readonly { name: string; value: Value; type: Type; span: Span }[];
    /** The call, for a missing argument. */
    readonly span: Span;
  };

function article(t: Type): string {
  return /^[AEIOU]/.test(typeToString(t)) ? "an" : "a";
}

/** The env a stored script is planned in: its folder is the working directory. */
export function viewEnv(caller: PlanEnv, canonical: string, top = false): PlanEnv {
  return {
    query: caller.query,
    workDir: dirname(canonical),
    now: caller.now,
    params: new Map(),
    streams: new Map(),
    chain: top ? [canonical] : [...caller.chain, canonical],
    script: canonical,
    diagnostics: caller.diagnostics,
    ...(caller.saved ? { saved: caller.saved } : {}),
    scriptBytes: caller.scriptBytes,
  };
}

/**
 * Reads and checks a stored script for `caller`; undefined with a diagnostic when it calls
 * itself (RECURSION) or does not check (its diagnostics name the script).
 */
export async function loadView(
  caller: PlanEnv,
  file: { canonical: string; real: string; files: TreeFiles },
  span?: Span,
): Promise<Script | undefined> {
  const at = caller.chain.indexOf(file.canonical);
  if (at >= 0) {
    const loop = [...caller.chain.slice(at), file.canonical].join(" → ");
    report(
      caller,
      "RECURSION",
      `the stored script ${file.canonical} calls itself: ${loop}`,
      span,
    );
    return undefined;
  }
  if (caller.chain.length >= MAX_VIEW_DEPTH) {
    report(
      caller,
      "RECURSION",
      `stored scripts nested too deeply: calling ${file.canonical} here makes ` +
        `${caller.chain.length + 1} stored scripts called one inside another (from ` +
        `${caller.chain[0]}), more than ${MAX_VIEW_DEPTH}`,
      span,
    );
    return undefined;
  }
  const bytes = (await file.files.read(file.real)).bytes;
  const limit = caller.query.limits.maxScriptBytes;
  caller.scriptBytes.used += bytes.length;
  if (limit !== undefined && caller.scriptBytes.used > limit) {
    report(
      caller,
      "BAD_ARGUMENT",
      `the stored script ${file.canonical} (${bytes.length} bytes) takes the scripts of this ` +
        `query over ${limit} bytes together (query.maxScriptBytes)`,
      span,
    );
    return undefined;
  }
  const { script, diagnostics } = check(new TextDecoder().decode(bytes));
  for (const d of diagnostics) caller.diagnostics.push({ ...d, script: file.canonical });
  return script;
}

/** `value` as the declared `type` (numbers widen, strings parse), or undefined. */
function coerce(value: Value, given: Type, want: Type, zone: string): Value | undefined {
  if (value === null || given.kind === "NULL" || sameType(given, want)) return value;
  if (isNumeric(given) && isNumeric(want)) {
    if (want.kind === "DOUBLE") return value;
    if (!Number.isInteger(value)) return undefined;
    // An INTEGER is 32 bits, as a literal of the API's text is checked: a wider value would
    // be rendered as another number where the schema says INTEGER (Arrow's Int32).
    const n = value as number;
    return want.kind === "INTEGER" && (n < -2147483648 || n > 2147483647) ? undefined : value;
  }
  if (typeof value === "string") {
    const parsed = parseLiteralOfType(value, want, zone);
    return parsed.ok ? parsed.value : undefined;
  }
  return undefined;
}

/**
 * Binds the `init` parameters of the script planned in `env` into `env.params`; mistakes are
 * reported to `caller` (at the call) with the argument named. Returns false when one failed.
 */
export function bindArguments(
  env: PlanEnv,
  params: readonly Param[],
  input: ArgumentInput,
  caller: PlanEnv,
): boolean {
  const zone = env.query.timeZone;
  const callSpan = input.kind === "values" ? input.span : undefined;
  let ok = true;
  const fail = (message: string, span = callSpan) => {
    report(caller, "BAD_ARGUMENT", message, span);
    ok = false;
  };
  const declared = new Map<string, Type>();
  for (const p of params) {
    if (p.kind === "mandatory") {
      declared.set(p.name, scalarByName(p.typeName)!);
    } else {
      const d = constant(env, p.defaultValue);
      if (!d) return false;
      declared.set(p.name, d.type);
      env.params.set(p.name, d);
    }
  }
  const given = input.kind === "text"
    ? Object.entries(input.values).map(([name, text]) => ({ name, text, span: callSpan }))
    : input.values.map((v) => ({ ...v, text: null }));
  const seen = new Set<string>();
  for (const g of given) {
    const type = declared.get(g.name);
    if (!type) {
      fail(`unknown argument '${g.name}'`, g.span);
      continue;
    }
    seen.add(g.name);
    const what = `${article(type)} ${typeToString(type)} for argument '${g.name}'`;
    if (g.text !== null) {
      const parsed = parseLiteralOfType(g.text, type, zone);
      if (!parsed.ok) fail(`'${g.text}' is not ${what}`, g.span);
      else env.params.set(g.name, { value: parsed.value, type });
    } else if ("value" in g) {
      const v = coerce(g.value, g.type, type, zone);
      if (v === undefined) {
        fail(`'${toText(g.value, { timeZone: zone }) ?? "null"}' is not ${what}`, g.span);
      } else env.params.set(g.name, { value: v, type });
    }
  }
  for (const p of params) {
    if (p.kind !== "mandatory" || seen.has(p.name)) continue;
    if (input.kind === "text" && input.standIns) {
      const type = declared.get(p.name)!;
      env.params.set(p.name, { value: standIn(type), type });
    } else fail(`missing mandatory argument '${p.name}'`);
  }
  return ok;
}

/** A value of `type` for a mandatory argument not given while a view is checked. */
function standIn(type: Type): Value {
  switch (type.kind) {
    case "BOOLEAN":
      return false;
    case "INTEGER":
    case "LONG":
    case "DOUBLE":
      return 1;
    case "TIMESTAMP":
      return new Timestamp(0);
    case "INTERVAL":
      return new Interval(1000);
    case "IPADDR":
      return new IpAddr(4, 0);
    case "IPNET":
      return new IpNet(new IpAddr(4, 0), 0);
    default:
      return "";
  }
}
