/**
 * Sigma rules (YAML, one or more documents) → Trawl scripts. Per rule: its metadata, the target
 * (record shape) and source it reads, the script, the fields as mapped, warnings; or a typed
 * reason it is not converted. The same mapped predicate is also evaluated here over JSON records
 * (`matchRecords`, for `POST /sigma/test`); tests hold the two to the same answers.
 */

import { parseAllDocuments } from "yaml";
import {
  detectionTree,
  fieldsOf,
  isMap,
  type Leaf,
  type Node,
  Refusal,
  type RefusalReason,
  type Segment,
} from "./detection.ts";
import type { FieldMapping, MappingLogsource, SigmaMapping } from "./mapping.ts";

export interface ConvertOptions {
  readonly mappings: readonly SigmaMapping[];
  /** Only this target; else the first whose log sources have the rule's. */
  readonly target?: string;
  /** Fills `{store}` in sources; else the mapping's default. */
  readonly store?: string;
}

export interface FieldUse {
  readonly sigma: string;
  readonly paths: readonly string[];
  readonly values?: Readonly<Record<string, string>>;
}

export interface Conversion {
  readonly id: string | null;
  readonly title: string | null;
  readonly level: string | null;
  readonly status: string | null;
  readonly logsource: Readonly<Record<string, string>>;
  readonly ok: boolean;
  readonly target?: string;
  readonly sources?: readonly string[];
  readonly script?: string;
  readonly fields?: readonly FieldUse[];
  readonly warnings: readonly string[];
  readonly reason?: RefusalReason;
  readonly message?: string;
  /** The predicate over records (not shown by the API). */
  readonly predicate?: MappedNode;
}

/** A leaf whose field is a record path. */
export type MappedLeaf = Leaf & { readonly path: string; readonly otherPath?: string };
export type MappedNode =
  | MappedLeaf
  | { readonly kind: "and" | "or"; readonly items: readonly MappedNode[] }
  | { readonly kind: "not"; readonly item: MappedNode }
  | { readonly kind: "const"; readonly value: boolean };

/** Converts every rule of a YAML text (documents separated by `---`). */
export function convertRules(text: string, options: ConvertOptions): Conversion[] {
  const documents = parseAllDocuments(text);
  const list = Array.isArray(documents) ? documents : [documents];
  const out: Conversion[] = [];
  for (const doc of list) {
    if (doc.errors.length > 0) {
      out.push(refused({}, "BAD_RULE", `not YAML: ${doc.errors[0]!.message}`));
      continue;
    }
    const rule = doc.toJS();
    if (rule === null || rule === undefined) continue;
    out.push(convertRule(rule, options));
  }
  return out;
}

function text(v: unknown): string | null {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : null;
}

function refused(
  rule: Record<string, unknown>,
  reason: RefusalReason,
  message: string,
): Conversion {
  return { ...metadata(rule), ok: false, warnings: [], reason, message };
}

function metadata(rule: Record<string, unknown>) {
  const logsource: Record<string, string> = {};
  if (isMap(rule.logsource)) {
    for (const [k, v] of Object.entries(rule.logsource)) {
      if (typeof v === "string") logsource[k] = v;
    }
  }
  return {
    id: text(rule.id),
    title: text(rule.title),
    level: text(rule.level),
    status: text(rule.status),
    logsource,
  };
}

/** Converts one parsed rule. */
export function convertRule(rule: unknown, options: ConvertOptions): Conversion {
  if (!isMap(rule)) return refused({}, "BAD_RULE", "a rule is a YAML map");
  try {
    if (rule.action !== undefined) {
      throw new Refusal("BAD_RULE", "rule collections ('action:') are not supported");
    }
    if (!isMap(rule.logsource)) throw new Refusal("BAD_RULE", "'logsource' is missing");
    const { node, warnings } = detectionTree(rule.detection);
    const meta = metadata(rule);
    const candidates = options.mappings.filter((m) =>
      options.target === undefined || m.target === options.target
    );
    if (candidates.length === 0) {
      throw new Refusal("NO_SOURCE", `there is no mapping named '${options.target}'`);
    }
    const found = candidates.flatMap((mapping) => {
      const source = mapping.logsources.find((s) => sameLogsource(s, meta.logsource));
      return source ? [{ mapping, source }] : [];
    });
    if (found.length === 0) {
      const ls = Object.entries(meta.logsource).map(([k, v]) => `${k}: ${v}`).join(", ");
      throw new Refusal(
        "NO_SOURCE",
        `no ${options.target ? `'${options.target}' ` : ""}mapping reads logsource {${ls}}`,
      );
    }
    // The first target that has every field; else the first one's refusal.
    let first: Refusal | undefined;
    for (const { mapping, source } of found) {
      try {
        return build(meta, node, warnings, mapping, source, options);
      } catch (e) {
        if (!(e instanceof Refusal)) throw e;
        first ??= e;
      }
    }
    throw first!;
  } catch (e) {
    if (e instanceof Refusal) return refused(rule, e.reason, e.message);
    throw e;
  }
}

function sameLogsource(s: MappingLogsource, logsource: Readonly<Record<string, string>>): boolean {
  return (["product", "service", "category"] as const).every((k) =>
    (s[k] ?? undefined) === (logsource[k] ?? undefined)
  );
}

interface Resolved {
  readonly paths: readonly string[];
  readonly values?: Readonly<Record<string, string>>;
  readonly append?: string;
}

function resolveField(
  field: string,
  source: MappingLogsource,
  allMappings: readonly SigmaMapping[],
): Resolved {
  const fields = source.fields;
  let entry: FieldMapping | undefined = fields[field];
  if (entry === undefined) {
    const key = Object.keys(fields).find((k) => k.toLowerCase() === field.toLowerCase());
    if (key !== undefined) entry = fields[key];
  }
  if (entry === undefined) {
    const head = field.split(".")[0]!;
    if (source.paths.includes(field) || source.paths.includes(head)) return { paths: [field] };
    const elsewhere = allMappings.flatMap((m) =>
      m.logsources.filter((s) =>
        Object.keys(s.fields).some((k) => k.toLowerCase() === field.toLowerCase()) ||
        s.paths.includes(field.split(".")[0]!)
      ).map((s) => `${m.target} (${s.product ?? ""}/${s.service ?? s.category ?? ""})`)
    );
    throw new Refusal(
      "UNKNOWN_FIELD",
      elsewhere.length === 0
        ? `field '${field}' exists in no shape of record Trawl reads`
        : `field '${field}' is not in this log source's records; it is in ${
          [...new Set(elsewhere)].join(", ")
        }`,
    );
  }
  if (entry === null) {
    throw new Refusal(
      "UNKNOWN_FIELD",
      `field '${field}' exists in no record of this log source (the mapping says so)`,
    );
  }
  if (typeof entry === "string") return { paths: [entry] };
  if (Array.isArray(entry)) return { paths: entry };
  const paths = Array.isArray(entry.path) ? entry.path : [entry.path];
  return {
    paths,
    ...(entry.values ? { values: entry.values } : {}),
    ...(entry.append !== undefined ? { append: entry.append } : {}),
  };
}

function build(
  meta: ReturnType<typeof metadata>,
  node: Node,
  warnings: string[],
  mapping: SigmaMapping,
  source: MappingLogsource,
  options: ConvertOptions,
): Conversion {
  const resolved = new Map<string, Resolved>();
  for (const f of fieldsOf(node)) resolved.set(f, resolveField(f, source, options.mappings));
  const predicate = mapNode(node, resolved);
  const store = options.store ?? mapping.store;
  const uri = source.source.replaceAll("{store}", store);
  const fields: FieldUse[] = [...resolved].map(([sigma, r]) => ({
    sigma,
    paths: r.paths,
    ...(r.values ? { values: r.values } : {}),
  }));
  const ls = Object.entries(meta.logsource).map(([k, v]) => `${k}=${v}`).join(" ");
  const time = fieldExpr(source.time);
  const script = [
    `// Sigma rule: ${oneLine(meta.title ?? "(no title)")}`,
    `// id: ${meta.id ?? "-"}, level: ${meta.level ?? "-"}, status: ${meta.status ?? "-"}`,
    `// logsource: ${ls}; mapping: ${mapping.target}`,
    `init(from::TIMESTAMP, to::TIMESTAMP);`,
    `READ_JSON(src: ${quote(uri)}, from: $from, to: $to)`,
    `| filter(T(STRING(${time})) >= $from and T(STRING(${time})) < $to)`,
    `| filter(${expression(predicate)})`,
    "",
  ].join("\n");
  if (source.note) warnings = [...warnings, source.note];
  return {
    ...meta,
    ok: true,
    target: mapping.target,
    sources: [uri],
    script,
    fields,
    warnings,
    predicate,
  };
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, " ");
}

function mapNode(node: Node, resolved: ReadonlyMap<string, Resolved>): MappedNode {
  switch (node.kind) {
    case "and":
    case "or":
      return { kind: node.kind, items: node.items.map((i) => mapNode(i, resolved)) };
    case "not":
      return { kind: "not", item: mapNode(node.item, resolved) };
    case "const":
      return node;
    default: {
      const r = resolved.get(node.field)!;
      let leaf: Leaf = node;
      if (leaf.kind === "str") leaf = { ...leaf, pattern: mapValue(leaf.pattern, r) };
      const leaves: MappedNode[] = r.paths.flatMap((path): MappedNode[] => {
        if (leaf.kind === "fieldref") {
          return resolved.get(leaf.other)!.paths.map((otherPath) => ({
            ...leaf,
            path,
            otherPath,
          }));
        }
        return [{ ...leaf, path }];
      });
      if (leaves.length === 1) return leaves[0]!;
      // A field written in several places: any may match; absent means absent from all.
      const all = leaf.kind === "null" || (leaf.kind === "exists" && !leaf.exists);
      return { kind: all ? "and" : "or", items: leaves };
    }
  }
}

function mapValue(pattern: readonly Segment[], r: Resolved): Segment[] {
  let out = [...pattern];
  const literal = out.filter((s) => s !== "*");
  if (r.values && literal.length === 1 && typeof literal[0] === "object") {
    const mapped = r.values[literal[0].text.toLowerCase()];
    if (mapped !== undefined) out = out.map((s) => typeof s === "object" ? { text: mapped } : s);
  }
  if (r.append && out.length > 0 && out[out.length - 1] !== "*") {
    out.push({ text: r.append });
  }
  return out;
}

// ---------------------------------------------------------------- the script's expression

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A record path as a Trawl field expression: each part backquoted unless a plain name. */
export function fieldExpr(path: string): string {
  return path.split(".").map((p) => PLAIN.test(p) && !KEYWORDS.has(p.toLowerCase()) ? p : bq(p))
    .join(".");
}

const KEYWORDS = new Set([
  "and",
  "or",
  "not",
  "in",
  "is",
  "null",
  "like",
  "true",
  "false",
  "as",
  "asc",
  "desc",
  "on",
  "distinct",
]);

function bq(name: string): string {
  if (name.includes("`")) throw new Refusal("BAD_RULE", `field name '${name}' holds a backquote`);
  return "`" + name + "`";
}

/** A Trawl string literal. */
export function quote(s: string): string {
  let out = "'";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === "'") out += "\\'";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += ch;
  }
  return out + "'";
}

function regexEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** A wildcard pattern as a regular expression (anchored at both ends). */
function patternRegex(pattern: readonly Segment[]): string {
  return "^" +
    pattern.map((s) => s === "*" ? "[\\s\\S]*" : s === "?" ? "[\\s\\S]" : regexEscape(s.text))
      .join("") +
    "$";
}

interface StringTest {
  readonly kind: "eq" | "contains" | "starts" | "ends" | "any" | "regex";
  readonly text: string;
}

function stringTest(pattern: readonly Segment[]): StringTest {
  let start = 0;
  let end = pattern.length;
  while (start < end && pattern[start] === "*") start++;
  while (end > start && pattern[end - 1] === "*") end--;
  const middle = pattern.slice(start, end);
  const lead = start > 0;
  const trail = end < pattern.length;
  if (middle.length === 0) {
    return lead || trail ? { kind: "any", text: "" } : { kind: "eq", text: "" };
  }
  if (middle.length === 1 && typeof middle[0] === "object") {
    const t = middle[0].text;
    return { kind: lead && trail ? "contains" : lead ? "ends" : trail ? "starts" : "eq", text: t };
  }
  return { kind: "regex", text: patternRegex(pattern) };
}

function expression(node: MappedNode): string {
  switch (node.kind) {
    case "and":
    case "or":
      return "(" + node.items.map(expression).join(` ${node.kind} `) + ")";
    case "not":
      return `not coalesce(${expression(node.item)}, false)`;
    case "const":
      return String(node.value);
    case "str": {
      const f = fieldExpr(node.path);
      const test = stringTest(node.pattern);
      const value = node.cased ? `STRING(${f})` : `lower(STRING(${f}))`;
      const lit = quote(node.cased ? test.text : test.text.toLowerCase());
      switch (test.kind) {
        case "any":
          return `${f} is not null`;
        case "eq":
          return `${value} = ${lit}`;
        case "contains":
          return `contains(${value}, ${lit})`;
        case "starts":
          return `starts_with(${value}, ${lit})`;
        case "ends":
          return `ends_with(${value}, ${lit})`;
        case "regex":
          return `STRING(${f}) ~ ${quote((node.cased ? "" : "(?i)") + test.text)}`;
      }
      break;
    }
    case "num": {
      const op = { gt: ">", gte: ">=", lt: "<", lte: "<=" }[node.op];
      return `DOUBLE(${fieldExpr(node.path)}) ${op} ${numberLiteral(node.value)}`;
    }
    case "re":
      return `STRING(${fieldExpr(node.path)}) ~ ${
        quote((node.ignoreCase ? "(?i)" : "") + node.source)
      }`;
    case "cidr":
      return `IP(STRING(${fieldExpr(node.path)})) in NET(${quote(node.net)})`;
    case "null":
      return `${fieldExpr(node.path)} is null`;
    case "exists":
      return `${fieldExpr(node.path)} is ${node.exists ? "not " : ""}null`;
    case "fieldref": {
      const a = `STRING(${fieldExpr(node.path)})`;
      const b = `STRING(${fieldExpr(node.otherPath!)})`;
      return node.cased ? `${a} = ${b}` : `lower(${a}) = lower(${b})`;
    }
  }
}

function numberLiteral(n: number): string {
  const s = String(n);
  return /^-?\d+$/.test(s) ? `${s}.0` : s.includes("e") ? n.toFixed(20) : s;
}

// ---------------------------------------------------------------- evaluation over records

function at(record: unknown, path: string): unknown {
  let v: unknown = record;
  for (const part of path.split(".")) {
    if (!isMap(v)) return null;
    v = v[part];
  }
  return v ?? null;
}

/** As the engine's STRING() of a JSON value. */
function asString(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

/** Whether the mapped predicate holds for one record (null counts as false, as in `filter`). */
export function matches(node: MappedNode, record: unknown): boolean {
  switch (node.kind) {
    case "and":
      return node.items.every((i) => matches(i, record));
    case "or":
      return node.items.some((i) => matches(i, record));
    case "not":
      return !matches(node.item, record);
    case "const":
      return node.value;
    case "str": {
      const raw = at(record, node.path);
      const s = asString(raw);
      const test = stringTest(node.pattern);
      if (test.kind === "any") return raw !== null;
      if (s === null) return false;
      const value = node.cased ? s : s.toLowerCase();
      const lit = node.cased ? test.text : test.text.toLowerCase();
      switch (test.kind) {
        case "eq":
          return value === lit;
        case "contains":
          return value.includes(lit);
        case "starts":
          return value.startsWith(lit);
        case "ends":
          return value.endsWith(lit);
        case "regex":
          return new RegExp(test.text, node.cased ? "u" : "iu").test(s);
      }
      return false;
    }
    case "num": {
      const s = asString(at(record, node.path));
      const n = s === null || s.trim() === "" ? NaN : Number(s);
      if (Number.isNaN(n)) return false;
      return node.op === "gt"
        ? n > node.value
        : node.op === "gte"
        ? n >= node.value
        : node.op === "lt"
        ? n < node.value
        : n <= node.value;
    }
    case "re": {
      const s = asString(at(record, node.path));
      return s !== null && new RegExp(node.source, node.ignoreCase ? "iu" : "u").test(s);
    }
    case "cidr": {
      const s = asString(at(record, node.path));
      return s !== null && inNetwork(s, node.net);
    }
    case "null":
      return at(record, node.path) === null;
    case "exists":
      return (at(record, node.path) !== null) === node.exists;
    case "fieldref": {
      const a = asString(at(record, node.path));
      const b = asString(at(record, node.otherPath!));
      if (a === null || b === null) return false;
      return node.cased ? a === b : a.toLowerCase() === b.toLowerCase();
    }
  }
}

/** The paths of the leaves that hold for the record (the "matched fields" of an alert). */
export function matchedPaths(node: MappedNode, record: unknown, into = new Set<string>()) {
  switch (node.kind) {
    case "and":
    case "or":
      for (const i of node.items) matchedPaths(i, record, into);
      break;
    case "not":
    case "const":
      break;
    default:
      if (matches(node, record)) into.add(node.path);
  }
  return into;
}

function ipBits(text: string): { bits: bigint; width: number } | null {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    if (parts.some((p) => p > 255)) return null;
    return { bits: BigInt(parts.reduce((a, p) => a * 256 + p, 0)), width: 32 };
  }
  if (!text.includes(":")) return null;
  const [head = "", tail, extra] = text.split("::");
  if (extra !== undefined) return null;
  const h = head === "" ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const last = (tail === undefined ? h : t).at(-1);
  let mapped: bigint | null = null;
  if (last?.includes(".")) {
    const v4bits = ipBits(last);
    if (!v4bits) return null;
    mapped = v4bits.bits;
    (tail === undefined ? h : t).pop();
  }
  const groups = 8 - (mapped !== null ? 2 : 0);
  const fill = tail === undefined ? 0 : groups - h.length - t.length;
  if (fill < 0 || (tail === undefined && h.length !== groups)) return null;
  const all = [...h, ...Array(fill).fill("0"), ...t];
  let bits = 0n;
  for (const g of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    bits = (bits << 16n) | BigInt(parseInt(g, 16));
  }
  if (mapped !== null) bits = (bits << 32n) | mapped;
  // An IPv4-mapped IPv6 address is in the IPv4 networks of its IPv4 address (as the engine).
  if (bits >> 32n === 0xffffn) return { bits: bits & 0xffffffffn, width: 32 };
  return { bits, width: 128 };
}

function inNetwork(address: string, net: string): boolean {
  const [base = "", lengthText = ""] = net.split("/");
  const a = ipBits(address.trim());
  const n = ipBits(base);
  const length = Number(lengthText);
  if (!a || !n || a.width !== n.width || !(length >= 0 && length <= n.width)) return false;
  const shift = BigInt(n.width - length);
  return (a.bits >> shift) === (n.bits >> shift);
}

/** Runs a converted rule over records: the indexes that match, with the paths that did. */
export function matchRecords(
  conversion: Conversion,
  records: readonly unknown[],
): { index: number; fields: string[] }[] {
  const predicate = conversion.predicate;
  if (!predicate) return [];
  const out: { index: number; fields: string[] }[] = [];
  records.forEach((r, index) => {
    if (matches(predicate, r)) out.push({ index, fields: [...matchedPaths(predicate, r)] });
  });
  return out;
}
