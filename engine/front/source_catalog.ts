/**
 * The sources written like calls (LANGUAGE.md section 4), with the named arguments each takes:
 * the one list the parser, the checker and the planner read.
 */

export interface SourceSignature {
  /** As the reference writes it: `READ_JSON`. */
  readonly name: string;
  readonly required: readonly string[];
  readonly optional: readonly string[];
  /** A required argument that another may replace: `pattern` or `pattern_file`. */
  readonly instead?: Readonly<Record<string, string>>;
  /** In the reference but not implemented yet: checked, then refused by the planner. */
  readonly later?: boolean;
}

export const SOURCE_CATALOG: readonly SourceSignature[] = [
  { name: "LIST", required: ["src"], optional: ["from", "to"] },
  {
    name: "PARSE",
    required: ["pattern", "src"],
    instead: { pattern: "pattern_file" },
    optional: [
      "pattern_file",
      "from",
      "to",
      "record_start",
      "max_record_lines",
      "unmatched",
      "path_field",
      "zone",
      "raw_field",
      "line_field",
    ],
  },
  {
    name: "READ_JSON",
    required: ["src"],
    optional: ["from", "to", "path_field", "line_field", "raw_field"],
  },
  {
    name: "READ_CSV",
    required: ["src"],
    optional: [
      "delimiter",
      "header",
      "quote",
      "from",
      "to",
      "path_field",
      "line_field",
      "raw_field",
    ],
  },
  {
    name: "READ_W3C",
    required: ["src"],
    optional: ["from", "to", "path_field", "line_field", "raw_field"],
  },
  {
    name: "READ_ZEEK",
    required: ["src"],
    optional: ["from", "to", "path_field", "line_field", "raw_field"],
  },
];

/** Every source written like a call, upper-case: those above and VALUES (rows, not arguments). */
export const SOURCE_NAMES: readonly string[] = [...SOURCE_CATALOG.map((s) => s.name), "VALUES"];

/** The signature of a call-like source (case-insensitive), or undefined. */
export function lookupSource(name: string): SourceSignature | undefined {
  const upper = name.toUpperCase();
  return SOURCE_CATALOG.find((s) => s.name === upper);
}
