/**
 * Types of values (INTEGER, IPADDR, ...), apart from the runtime values themselves
 * (engine/values/values.ts). A schema is an ordered list of fields; its JSON form is the one of the
 * specification: `{"ip": "?IPADDR", "tags": {"ARRAY": "STRING"}, "who": {"?TUPLE": {...}}}`.
 */

export type ScalarKind =
  | "BOOLEAN"
  | "INTEGER"
  | "LONG"
  | "DOUBLE"
  | "STRING"
  | "TIMESTAMP"
  | "IPADDR"
  | "IPNET"
  | "INTERVAL";

/**
 * `ANY` is the static type of a value not known until data is read (fields of READ_JSON);
 * the result schema replaces it by the type observed in the data. `NULL` is the type of the
 * literal `null` and widens to anything.
 */
export type Type =
  | { readonly kind: ScalarKind }
  | { readonly kind: "ANY" }
  | { readonly kind: "NULL" }
  | { readonly kind: "ARRAY"; readonly element: Type }
  | { readonly kind: "TUPLE"; readonly fields: Schema };

export interface Field {
  readonly name: string;
  readonly type: Type;
  /** The field may hold null: a leading `?` in the schema JSON. */
  readonly nullable: boolean;
}

export type Schema = readonly Field[];

export const SCALAR_KINDS: readonly ScalarKind[] = [
  "BOOLEAN",
  "INTEGER",
  "LONG",
  "DOUBLE",
  "STRING",
  "TIMESTAMP",
  "IPADDR",
  "IPNET",
  "INTERVAL",
];

const scalars = new Map<string, Type>(SCALAR_KINDS.map((k) => [k, { kind: k }]));

/** The shared instance of a scalar type. */
export function scalar(kind: ScalarKind): Type {
  return scalars.get(kind)!;
}

export const ANY: Type = { kind: "ANY" };
export const NULL_TYPE: Type = { kind: "NULL" };

export function arrayOf(element: Type): Type {
  return { kind: "ARRAY", element };
}

export function tupleOf(fields: Schema): Type {
  return { kind: "TUPLE", fields };
}

export function isNumeric(t: Type): boolean {
  return t.kind === "INTEGER" || t.kind === "LONG" || t.kind === "DOUBLE";
}

/** Type of a scalar type name as written in scripts (`IPADDR`, case-insensitive), or undefined. */
export function scalarByName(name: string): Type | undefined {
  return scalars.get(name.toUpperCase());
}

export function sameType(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "ARRAY") return sameType(a.element, (b as typeof a).element);
  if (a.kind === "TUPLE") {
    const bf = (b as typeof a).fields;
    return a.fields.length === bf.length &&
      a.fields.every((f, i) =>
        f.name === bf[i]!.name && f.nullable === bf[i]!.nullable && sameType(f.type, bf[i]!.type)
      );
  }
  return true;
}

const NUMERIC_RANK: Readonly<Record<string, number>> = { INTEGER: 0, LONG: 1, DOUBLE: 2 };

/**
 * The narrowest type that holds values of both: numbers widen INTEGER < LONG < DOUBLE, tuples
 * merge their fields (a field missing on one side becomes nullable), arrays widen their
 * elements; anything else that differs becomes STRING. NULL widens to the other side.
 */
export function widen(a: Type, b: Type): Type {
  if (a.kind === "NULL" || a.kind === "ANY") return b.kind === "NULL" ? a : b;
  if (b.kind === "NULL" || b.kind === "ANY") return a;
  if (sameType(a, b)) return a;
  if (isNumeric(a) && isNumeric(b)) {
    return NUMERIC_RANK[a.kind]! >= NUMERIC_RANK[b.kind]! ? a : b;
  }
  if (a.kind === "ARRAY" && b.kind === "ARRAY") return arrayOf(widen(a.element, b.element));
  if (a.kind === "TUPLE" && b.kind === "TUPLE") return tupleOf(widenSchema(a.fields, b.fields));
  return scalar("STRING");
}

/** Field-wise widening of two schemas by name; fields of only one side become nullable. */
export function widenSchema(a: Schema, b: Schema): Schema {
  const out: Field[] = [];
  const bByName = new Map(b.map((f) => [f.name, f]));
  for (const f of a) {
    const g = bByName.get(f.name);
    if (g) {
      out.push({ name: f.name, type: widen(f.type, g.type), nullable: f.nullable || g.nullable });
      bByName.delete(f.name);
    } else out.push({ ...f, nullable: true });
  }
  for (const g of bByName.values()) out.push({ ...g, nullable: true });
  return out;
}

export type TypeJson = string | { readonly [key: string]: TypeJson | SchemaJson };
export type SchemaJson = { readonly [name: string]: TypeJson };

/** The JSON form of a type; `nullable` adds the leading `?`. ANY prints as STRING-less `ANY`. */
export function typeToJson(t: Type, nullable = false): TypeJson {
  const q = nullable ? "?" : "";
  switch (t.kind) {
    case "ARRAY":
      return { [q + "ARRAY"]: typeToJson(t.element) };
    case "TUPLE":
      return { [q + "TUPLE"]: schemaToJson(t.fields) };
    default:
      return q + t.kind;
  }
}

export function schemaToJson(schema: Schema): SchemaJson {
  const out: Record<string, TypeJson> = {};
  for (const f of schema) out[f.name] = typeToJson(f.type, f.nullable);
  return out;
}

/** Reads the JSON form back; throws an Error naming the offending part when it is malformed. */
export function typeFromJson(json: unknown): { type: Type; nullable: boolean } {
  if (typeof json === "string") {
    const nullable = json.startsWith("?");
    const name = nullable ? json.slice(1) : json;
    if (name === "ANY") return { type: ANY, nullable };
    if (name === "NULL") return { type: NULL_TYPE, nullable: true };
    const t = scalars.get(name);
    if (!t) throw new Error(`unknown type name '${json}'`);
    return { type: t, nullable };
  }
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const entries = Object.entries(json);
    if (entries.length === 1) {
      const [key, inner] = entries[0]!;
      const nullable = key.startsWith("?");
      const name = nullable ? key.slice(1) : key;
      if (name === "ARRAY") return { type: arrayOf(typeFromJson(inner).type), nullable };
      if (name === "TUPLE") return { type: tupleOf(schemaFromJson(inner)), nullable };
    }
  }
  throw new Error(`malformed type ${JSON.stringify(json)}`);
}

export function schemaFromJson(json: unknown): Schema {
  if (!json || typeof json !== "object" || Array.isArray(json)) {
    throw new Error(`malformed schema ${JSON.stringify(json)}`);
  }
  return Object.entries(json).map(([name, t]) => {
    const { type, nullable } = typeFromJson(t);
    return { name, type, nullable };
  });
}

/** Compact form for messages and the plan printer: `?IPADDR`, `ARRAY<STRING>`, `TUPLE<a INTEGER>`. */
export function typeToString(t: Type): string {
  switch (t.kind) {
    case "ARRAY":
      return `ARRAY<${typeToString(t.element)}>`;
    case "TUPLE":
      return `TUPLE<${
        t.fields.map((f) => `${f.name} ${f.nullable ? "?" : ""}${typeToString(f.type)}`).join(", ")
      }>`;
    default:
      return t.kind;
  }
}
