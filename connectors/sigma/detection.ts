/**
 * A Sigma rule's `detection` made into a tree of predicates on Sigma field names (independent of
 * any log's shape): search identifiers become and/or of leaves, values and modifiers become
 * patterns (specification v2: case-insensitive strings, `*` and `?` wildcards with `\` escapes,
 * `contains`/`startswith`/`endswith`/`all`/`re`/`cidr`/`exists`/`base64`/`base64offset`/`windash`/
 * `cased`/`gt`.../`fieldref`, `null`). What cannot be expressed throws a `Refusal` with its reason.
 */

import { type Condition, namesMatching, parseCondition } from "./condition.ts";

/** Why a rule is not converted (stable codes, shown by the API and counted by the coverage tool). */
export type RefusalReason =
  | "BAD_RULE"
  | "PLACEHOLDER"
  | "KEYWORDS"
  | "AGGREGATION"
  | "UNSUPPORTED_MODIFIER"
  | "UNSUPPORTED_REGEX"
  | "UNKNOWN_FIELD"
  | "NO_SOURCE";

export class Refusal extends Error {
  constructor(readonly reason: RefusalReason, message: string) {
    super(message);
  }
}

/** A string pattern: literal runs, `*` (any run) and `?` (one character). */
export type Segment = { readonly text: string } | "*" | "?";

export type Leaf =
  | {
    readonly kind: "str";
    readonly field: string;
    readonly pattern: readonly Segment[];
    readonly cased: boolean;
  }
  | {
    readonly kind: "num";
    readonly field: string;
    readonly op: "gt" | "gte" | "lt" | "lte";
    readonly value: number;
  }
  | {
    readonly kind: "re";
    readonly field: string;
    readonly source: string;
    readonly ignoreCase: boolean;
  }
  | { readonly kind: "cidr"; readonly field: string; readonly net: string }
  | { readonly kind: "null"; readonly field: string }
  | { readonly kind: "exists"; readonly field: string; readonly exists: boolean }
  | {
    readonly kind: "fieldref";
    readonly field: string;
    readonly other: string;
    readonly cased: boolean;
  };

export type Node =
  | Leaf
  | { readonly kind: "and" | "or"; readonly items: readonly Node[] }
  | { readonly kind: "not"; readonly item: Node }
  | { readonly kind: "const"; readonly value: boolean };

const KNOWN_MODIFIERS = new Set([
  "contains",
  "startswith",
  "endswith",
  "all",
  "re",
  "i",
  "m",
  "s",
  "cidr",
  "exists",
  "base64",
  "base64offset",
  "windash",
  "cased",
  "gt",
  "gte",
  "lt",
  "lte",
  "fieldref",
]);

/** Builds the predicate of `detection` (the YAML map), its condition included. */
export function detectionTree(detection: unknown): { node: Node; warnings: string[] } {
  if (!isMap(detection)) throw new Refusal("BAD_RULE", "'detection' is not a map");
  const warnings: string[] = [];
  const raw = detection["condition"];
  const conditions = typeof raw === "string"
    ? [raw]
    : Array.isArray(raw) && raw.every((c) => typeof c === "string")
    ? raw as string[]
    : undefined;
  if (!conditions || conditions.length === 0) {
    throw new Refusal("BAD_RULE", "'detection.condition' is missing or not a string");
  }
  if (detection["timeframe"] !== undefined) {
    warnings.push("'timeframe' is ignored: it only matters to the deprecated aggregation");
  }
  const names = Object.keys(detection).filter((k) => k !== "condition" && k !== "timeframe");
  const built = new Map<string, Node>();
  const identifier = (name: string): Node => {
    let node = built.get(name);
    if (!node) {
      if (!Object.hasOwn(detection, name)) {
        throw new Refusal("BAD_RULE", `the condition names '${name}', which the detection lacks`);
      }
      node = searchIdentifier(name, detection[name]);
      built.set(name, node);
    }
    return node;
  };
  const toNode = (c: Condition): Node => {
    switch (c.kind) {
      case "ref":
        return identifier(c.name);
      case "not":
        return { kind: "not", item: toNode(c.item) };
      case "and":
      case "or":
        return { kind: c.kind, items: c.items.map(toNode) };
      case "of": {
        const matched = namesMatching(c.pattern, names);
        if (matched.length === 0) {
          throw new Refusal("BAD_RULE", `'${c.pattern}' matches no search identifier`);
        }
        return { kind: c.quantifier === "all" ? "and" : "or", items: matched.map(identifier) };
      }
    }
  };
  const nodes = conditions.map((text) => {
    const parsed = parseCondition(text);
    if (!parsed.ok) {
      throw new Refusal(parsed.aggregation ? "AGGREGATION" : "BAD_RULE", parsed.message);
    }
    return toNode(parsed.condition);
  });
  return { node: nodes.length === 1 ? nodes[0]! : { kind: "or", items: nodes }, warnings };
}

function searchIdentifier(name: string, value: unknown): Node {
  if (isMap(value)) return mapNode(name, value);
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every(isMap)) {
      return { kind: "or", items: value.map((m) => mapNode(name, m as Record<string, unknown>)) };
    }
    throw new Refusal(
      "KEYWORDS",
      `'${name}' is a keyword search (values that may be anywhere in the record), which has no field to match`,
    );
  }
  if (typeof value === "string" || typeof value === "number") {
    throw new Refusal("KEYWORDS", `'${name}' is a keyword search, which has no field to match`);
  }
  throw new Refusal("BAD_RULE", `'${name}' is neither a map nor a list`);
}

function mapNode(name: string, map: Record<string, unknown>): Node {
  const items: Node[] = [];
  for (const [key, value] of Object.entries(map)) {
    const [field = "", ...modifiers] = key.split("|");
    if (field === "") {
      throw new Refusal("KEYWORDS", `'${name}' has '${key}' with no field: a keyword search`);
    }
    items.push(fieldNode(field, modifiers, value));
  }
  if (items.length === 0) throw new Refusal("BAD_RULE", `'${name}' is an empty map`);
  return items.length === 1 ? items[0]! : { kind: "and", items };
}

function fieldNode(field: string, modifiers: readonly string[], value: unknown): Node {
  for (const m of modifiers) {
    if (m === "expand") {
      throw new Refusal(
        "PLACEHOLDER",
        `'${field}|expand' uses a placeholder, to be filled by the deployment`,
      );
    }
    if (!KNOWN_MODIFIERS.has(m)) {
      throw new Refusal("UNSUPPORTED_MODIFIER", `modifier '${m}' of '${field}' is not supported`);
    }
  }
  const has = (m: string) => modifiers.includes(m);
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) throw new Refusal("BAD_RULE", `'${field}' has an empty list of values`);
  const joined = (items: Node[]): Node =>
    items.length === 1 ? items[0]! : { kind: has("all") ? "and" : "or", items };
  if (has("exists")) {
    const v = values[0];
    if (values.length !== 1 || typeof v !== "boolean") {
      throw new Refusal("BAD_RULE", `'${field}|exists' takes true or false`);
    }
    return { kind: "exists", field, exists: v };
  }
  if (has("fieldref")) {
    return joined(values.map((v) => {
      if (typeof v !== "string") throw new Refusal("BAD_RULE", `'${field}|fieldref' takes names`);
      return { kind: "fieldref", field, other: v, cased: has("cased") };
    }));
  }
  const numeric = (["gt", "gte", "lt", "lte"] as const).find(has);
  if (numeric) {
    return joined(values.map((v) => {
      const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : NaN;
      if (!Number.isFinite(n)) {
        throw new Refusal("BAD_RULE", `'${field}|${numeric}' takes numbers, not '${String(v)}'`);
      }
      return { kind: "num", field, op: numeric, value: n };
    }));
  }
  if (has("re")) {
    if (has("m") || has("s")) {
      throw new Refusal(
        "UNSUPPORTED_MODIFIER",
        `'${field}|re' with 'm' or 's' is not supported (only 'i')`,
      );
    }
    return joined(values.map((v) => {
      if (typeof v !== "string") throw new Refusal("BAD_RULE", `'${field}|re' takes strings`);
      const refusal = regexRefusal(v);
      if (refusal) {
        throw new Refusal("UNSUPPORTED_REGEX", `'${field}|re' value '${v}': ${refusal}`);
      }
      return { kind: "re", field, source: v, ignoreCase: has("i") };
    }));
  }
  if (has("cidr")) {
    return joined(values.map((v) => {
      if (typeof v !== "string" || !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(v)) {
        throw new Refusal("BAD_RULE", `'${field}|cidr' value '${String(v)}' is not a network`);
      }
      return { kind: "cidr", field, net: v };
    }));
  }
  const leaves: Node[] = [];
  for (const v of values) {
    if (v === null) {
      leaves.push({ kind: "null", field });
      continue;
    }
    if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
      throw new Refusal("BAD_RULE", `'${field}' has a value that is not a scalar`);
    }
    const encoded = has("base64") || has("base64offset");
    let texts = [String(v)];
    if (has("windash")) texts = texts.flatMap(windash);
    let patterns: Segment[][];
    if (encoded) {
      // The encoded text is literal and case-sensitive; wildcards are not encoded.
      const encodings = texts.flatMap((t) => has("base64offset") ? base64Offsets(t) : [base64(t)]);
      patterns = encodings.map((e) => [{ text: e }]);
    } else {
      patterns = texts.map((t) => typeof v === "string" ? parseWildcards(t) : [{ text: t }]);
    }
    const cased = has("cased") || encoded;
    const variants: Node[] = patterns.map((p) => ({
      kind: "str",
      field,
      pattern: wrap(p, has("contains") || has("base64offset"), has("startswith"), has("endswith")),
      cased,
    }));
    leaves.push(variants.length === 1 ? variants[0]! : { kind: "or", items: variants });
  }
  return joined(leaves);
}

function wrap(p: Segment[], contains: boolean, startswith: boolean, endswith: boolean): Segment[] {
  const out = [...p];
  if (contains || endswith) out.unshift("*");
  if (contains || startswith) out.push("*");
  return out;
}

/** Sigma's wildcards: `*`, `?`; `\*`, `\?` and `\\` are the characters; any other `\` is itself. */
export function parseWildcards(value: string): Segment[] {
  const out: Segment[] = [];
  let text = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (ch === "\\" && i + 1 < value.length && "*?\\".includes(value[i + 1]!)) {
      text += value[++i];
    } else if (ch === "*" || ch === "?") {
      if (text) out.push({ text });
      text = "";
      out.push(ch);
    } else {
      text += ch;
    }
  }
  if (text) out.push({ text });
  return out;
}

function base64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** The three base64 texts of `text` at each offset in a stream, cut where they stay stable. */
function base64Offsets(text: string): string[] {
  const length = new TextEncoder().encode(text).length;
  const starts = [0, 2, 3];
  const endCuts = [0, 3, 2];
  return [0, 1, 2].map((shift) => {
    const encoded = base64(" ".repeat(shift) + text);
    const cut = endCuts[(length + shift) % 3]!;
    return encoded.slice(starts[shift]!, cut === 0 ? undefined : encoded.length - cut);
  });
}

const DASHES = ["-", "/", "\u2013", "\u2014", "\u2015"];

/** windash: each option dash (at the start or after white space) as each of Windows' dashes. */
function windash(text: string): string[] {
  if (!/(^|\s)-/.test(text)) return [text];
  return DASHES.map((d) => text.replace(/(^|\s)-/g, `$1${d}`));
}

/** Why the engine cannot run a Sigma regular expression, or undefined. */
export function regexRefusal(source: string): string | undefined {
  if (/\(\?<?[=!]/.test(source)) {
    return "lookaround is not supported (the engine runs in linear time)";
  }
  if (/\\[1-9]|\\k</.test(source)) {
    return "backreferences are not supported (the engine runs in linear time)";
  }
  try {
    new RegExp(source, "u");
  } catch (e) {
    return `not a valid regular expression (${(e as Error).message})`;
  }
  return undefined;
}

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every Sigma field name the tree reads. */
export function fieldsOf(node: Node, into = new Set<string>()): Set<string> {
  switch (node.kind) {
    case "and":
    case "or":
      for (const i of node.items) fieldsOf(i, into);
      break;
    case "not":
      fieldsOf(node.item, into);
      break;
    case "const":
      break;
    case "fieldref":
      into.add(node.field).add(node.other);
      break;
    default:
      into.add(node.field);
  }
  return into;
}
