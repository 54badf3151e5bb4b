/**
 * The frame of a `.sxt` file (docs/sxt-format.md): a header line with the magic, the version,
 * the schema and the column order, padded with spaces to a reserved size so that it can be
 * rewritten in place once the final schema is known; row lines; a trailer line with the row
 * count, the byte length and the SHA-256 of the row lines, so that a torn file is detected.
 */

import {
  arrayOf,
  type Schema,
  schemaFromJson,
  schemaToJson,
  tupleOf,
  type Type,
} from "../values/types.ts";

export const MAGIC = "SXT1 ";
export const VERSION = 1;
/** Bytes reserved for the header line when a writer starts; more when the schema is large. */
export const MIN_HEADER_BYTES = 4096;

export interface SxtHeader {
  readonly schema: Schema;
  /** Field names in the order of the values of every row line. */
  readonly columns: readonly string[];
}

export interface SxtTrailer {
  readonly rows: number;
  readonly bytes: number;
  readonly sha256: string;
}

/** The header line's text without padding or newline. */
export function headerText(header: SxtHeader): string {
  return MAGIC +
    JSON.stringify({
      version: VERSION,
      schema: schemaToJson(header.schema),
      order: orderOf(header.schema),
      columns: header.columns,
    });
}

/** The header line padded with spaces to exactly `size` bytes including its newline. */
export function paddedHeader(text: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size).fill(32);
  out.set(text);
  out[size - 1] = 10;
  return out;
}

/** Reads a header line (without its newline); throws an Error saying what is wrong. */
export function parseHeader(line: string): SxtHeader {
  if (!line.startsWith(MAGIC)) throw new Error("not a stored table (bad magic)");
  let json: { version?: unknown; schema?: unknown; order?: unknown; columns?: unknown };
  try {
    json = JSON.parse(line.slice(MAGIC.length));
  } catch {
    throw new Error("the header is not valid JSON");
  }
  if (json.version !== VERSION) {
    throw new Error(`unsupported table format version ${JSON.stringify(json.version)}`);
  }
  const schema = applyOrder(schemaFromJson(json.schema), json.order);
  const columns = json.columns;
  if (!Array.isArray(columns) || !columns.every((c) => typeof c === "string")) {
    throw new Error("the header has no column list");
  }
  const names = new Set(schema.map((f) => f.name));
  const stray = columns.find((c) => !names.has(c));
  if (stray !== undefined) throw new Error(`column '${stray}' is not in the schema`);
  return { schema, columns };
}

export function trailerText(t: SxtTrailer): string {
  return JSON.stringify({ end: true, rows: t.rows, bytes: t.bytes, sha256: t.sha256 });
}

export function parseTrailer(line: string): SxtTrailer {
  let json: { end?: unknown; rows?: unknown; bytes?: unknown; sha256?: unknown };
  try {
    json = JSON.parse(line);
  } catch {
    throw new Error("the trailer is not valid JSON");
  }
  if (
    json.end !== true || typeof json.rows !== "number" || typeof json.bytes !== "number" ||
    typeof json.sha256 !== "string"
  ) throw new Error("malformed trailer");
  return { rows: json.rows, bytes: json.bytes, sha256: json.sha256 };
}

/**
 * The field order of a schema at every level. JSON objects put integer-like keys (`"0"`) first,
 * so the schema JSON alone would not keep the order of such fields.
 */
type Order = readonly (string | readonly [string, Order])[];

function orderOf(schema: Schema): Order {
  return schema.map((f) => {
    const inner = tupleFields(f.type);
    return inner ? [f.name, orderOf(inner)] as const : f.name;
  });
}

function tupleFields(t: Type): Schema | null {
  if (t.kind === "ARRAY") return tupleFields(t.element);
  return t.kind === "TUPLE" ? t.fields : null;
}

function applyOrder(schema: Schema, order: unknown): Schema {
  if (!Array.isArray(order) || order.length !== schema.length) {
    throw new Error("the header's field order does not match its schema");
  }
  const byName = new Map(schema.map((f) => [f.name, f]));
  return order.map((o) => {
    const [name, inner] = typeof o === "string" ? [o, null] : o as [string, unknown];
    const f = byName.get(name);
    if (!f) throw new Error(`the header's field order names an unknown field '${name}'`);
    return inner === null ? f : { ...f, type: reorderType(f.type, inner) };
  });
}

function reorderType(t: Type, order: unknown): Type {
  if (t.kind === "ARRAY") return arrayOf(reorderType(t.element, order));
  if (t.kind === "TUPLE") return tupleOf(applyOrder(t.fields, order));
  throw new Error("the header's field order does not match its schema");
}
