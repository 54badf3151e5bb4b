/**
 * Resolves a result schema from the values that flow: ANY becomes the type observed (widened
 * over all rows; STRING when only nulls were seen) and a field becomes nullable when a null
 * was seen, so the schema never claims less than the data shows.
 */

import { ANY, type Field, scalar, type Schema, type Type, widen } from "../values/types.ts";
import type { Row } from "../values/values.ts";
import { typeOfValue } from "../values/value_ops.ts";

function containsAny(t: Type): boolean {
  switch (t.kind) {
    case "ANY":
    case "NULL":
      return true;
    case "ARRAY":
      return containsAny(t.element);
    case "TUPLE":
      return t.fields.some((f) => containsAny(f.type));
    default:
      return false;
  }
}

/** ANY or NULL left where no value told more: STRING, the type every value renders to. */
function settle(t: Type): Type {
  switch (t.kind) {
    case "ANY":
    case "NULL":
      return scalar("STRING");
    case "ARRAY":
      return { kind: "ARRAY", element: settle(t.element) };
    case "TUPLE":
      return { kind: "TUPLE", fields: t.fields.map((f) => ({ ...f, type: settle(f.type) })) };
    default:
      return t;
  }
}

/**
 * Observes batches against a static schema; an `open` one (READ_JSON) also takes in the fields
 * that first appear in the data, after the known ones, nullable when a row lacked them.
 */
export class SchemaObserver {
  readonly #fields: Field[];
  readonly #observe: boolean[];
  readonly #observed: (Type | null)[];
  readonly #sawNull: boolean[];
  readonly #names: Set<string>;
  #rows = 0;

  constructor(schema: Schema, readonly open = false) {
    this.#fields = [...schema];
    this.#observe = schema.map((f) => containsAny(f.type));
    this.#observed = schema.map(() => null);
    this.#sawNull = schema.map(() => false);
    this.#names = new Set(schema.map((f) => f.name));
  }

  #discover(row: Row): void {
    for (const name of Object.keys(row)) {
      if (this.#names.has(name)) continue;
      this.#names.add(name);
      this.#fields.push({ name, type: ANY, nullable: false });
      this.#observe.push(true);
      this.#observed.push(null);
      // Rows before this one lacked the field.
      this.#sawNull.push(this.#rows > 0);
    }
  }

  observe(rows: readonly Row[]): void {
    const fields = this.#fields;
    for (const row of rows) {
      if (this.open) this.#discover(row);
      this.#rows++;
      for (let i = 0; i < fields.length; i++) {
        const v = row[fields[i]!.name];
        if (v === null || v === undefined) {
          this.#sawNull[i] = true;
        } else if (this.#observe[i]) {
          const t = typeOfValue(v);
          const prev = this.#observed[i]!;
          this.#observed[i] = prev === null ? t : widen(prev, t);
        }
      }
    }
  }

  /** Rows seen elsewhere (rendered by scan workers): `nulls[i]` says field i held a null. */
  observeNulls(nulls: readonly boolean[]): void {
    nulls.forEach((n, i) => {
      if (n && i < this.#sawNull.length) this.#sawNull[i] = true;
    });
  }

  schema(): Schema {
    return this.#fields.map((f, i) => {
      const nullable = f.nullable || this.#sawNull[i]!;
      if (!this.#observe[i]) return nullable === f.nullable ? f : { ...f, nullable };
      return { name: f.name, type: settle(this.#observed[i] ?? f.type), nullable };
    });
  }
}
