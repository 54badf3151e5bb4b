/**
 * Every function of the language (LANGUAGE.md section 5) with its number of arguments and
 * whether it aggregates. The checker reads it; the function implementations
 * (engine/functions/) are cross-checked against it, so the two cannot drift apart.
 */

export interface FunctionSignature {
  /** Lower case; function names are case-insensitive. */
  readonly name: string;
  readonly minArgs: number;
  /** `Infinity` for variadic functions such as concat. */
  readonly maxArgs: number;
  /** Computed over the rows of a group; allowed only in select. */
  readonly aggregate: boolean;
  /** Accepts `*` as its argument: only count(*). */
  readonly star?: boolean;
}

function fn(name: string, minArgs: number, maxArgs = minArgs): FunctionSignature {
  return { name, minArgs, maxArgs, aggregate: false };
}

function agg(name: string): FunctionSignature {
  return { name, minArgs: 1, maxArgs: 1, aggregate: true };
}

export const FUNCTION_CATALOG: readonly FunctionSignature[] = [
  // aggregates
  { name: "count", minArgs: 1, maxArgs: 1, aggregate: true, star: true },
  agg("count_distinct"),
  agg("sum"),
  agg("min"),
  agg("max"),
  agg("avg"),
  agg("first"),
  agg("last"),
  agg("array_agg"),
  // strings
  fn("lower", 1),
  fn("upper", 1),
  fn("len", 1),
  fn("substr", 2, 3),
  fn("trim", 1),
  fn("contains", 2),
  fn("starts_with", 2),
  fn("ends_with", 2),
  fn("replace", 3),
  fn("split", 2),
  fn("concat", 1, Infinity),
  fn("regex_extract", 2, 3),
  // time
  fn("now", 0),
  fn("t", 1),
  fn("time_trunc", 2),
  fn("format_time", 2, 3),
  fn("hour", 1),
  fn("day", 1),
  // network
  fn("ip", 1),
  fn("net", 1),
  fn("ip_trunc", 2),
  // casts: a failed cast gives null
  fn("integer", 1),
  fn("long", 1),
  fn("double", 1),
  fn("string", 1),
  fn("boolean", 1),
  fn("timestamp", 1, 2),
  // conditionals
  fn("coalesce", 1, Infinity),
  fn("if", 3),
];

const byName = new Map(FUNCTION_CATALOG.map((f) => [f.name, f]));

/** The signature of a function by name (case-insensitive), or undefined when there is none. */
export function lookupFunction(name: string): FunctionSignature | undefined {
  return byName.get(name.toLowerCase());
}

/** Sources written like calls, with the named arguments each accepts and needs. */
export interface SourceSignature {
  /** As the reference writes it: `READ_JSON`. */
  readonly name: string;
  readonly required: readonly string[];
  readonly optional: readonly string[];
}

export const SOURCE_CATALOG: readonly SourceSignature[] = [
  { name: "LIST", required: ["src"], optional: ["from", "to"] },
  { name: "PARSE", required: ["pattern", "src"], optional: ["from", "to"] },
  { name: "READ_JSON", required: ["src"], optional: ["from", "to"] },
  { name: "READ_CSV", required: ["src"], optional: ["delimiter", "header", "from", "to"] },
];

/** The signature of a call-like source (case-insensitive), or undefined. */
export function lookupSource(name: string): SourceSignature | undefined {
  const upper = name.toUpperCase();
  return SOURCE_CATALOG.find((s) => s.name === upper);
}
