/**
 * The Arrow IPC stream format (`application/vnd.apache.arrow.stream`), written a batch of rows
 * at a time with npm `apache-arrow`. Every type is kept:
 *
 * | Trawl      | Arrow                                                           |
 * |------------|-----------------------------------------------------------------|
 * | BOOLEAN    | bool                                                            |
 * | INTEGER    | int32                                                           |
 * | LONG       | int64 (BigInt, exact)                                           |
 * | DOUBLE     | float64                                                         |
 * | STRING     | utf8                                                            |
 * | TIMESTAMP  | timestamp[ms, <zone>] (the query's zone, or `opt.timezone`)     |
 * | INTERVAL   | duration[ms], field metadata `trawl.type = INTERVAL`            |
 * | IPADDR     | utf8 (`10.0.0.1`), field metadata `trawl.type = IPADDR`         |
 * | IPNET      | utf8 (`10.0.0.0/8`), field metadata `trawl.type = IPNET`        |
 * | ARRAY      | list                                                            |
 * | TUPLE      | struct                                                          |
 * | NULL, ANY  | null, utf8 (the value as text)                                  |
 *
 * Every field is nullable. The stream is the schema message once, then one record batch per
 * call of `batch`, then the end-of-stream marker: each piece is cut from what
 * `tableToIPC(..., "stream")` writes (no dictionaries are used, so the schema message is the
 * same in every piece).
 */

import * as arrow from "apache-arrow";
import {
  type Field as TrawlField,
  Interval,
  type RenderOptions,
  type Row,
  type Schema as TrawlSchema,
  Timestamp,
  toText,
  type Type,
  type Value,
} from "../engine/mod.ts";

/** A binary format written a batch of rows at a time. */
export interface BatchWriter {
  /** The bytes of these rows; the first call's start with the stream's header. */
  batch(rows: readonly Row[]): Uint8Array;
  /** The bytes after the last batch (the header too when no batch was written). */
  end(): Uint8Array;
}

/** The end-of-stream marker of the IPC stream format: continuation, then length 0. */
const END_OF_STREAM = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** Writes rows of `schema` as an Arrow IPC stream; timestamps carry `render.timeZone`. */
export function arrowBatchWriter(schema: TrawlSchema, render: RenderOptions): BatchWriter {
  const fields = schema.map((f) => arrowField(f.name, f.type, render));
  const arrowSchema = new arrow.Schema(fields);
  const headerOnly = arrow.tableToIPC(new arrow.Table(arrowSchema), "stream");
  const headerBytes = headerOnly.length - END_OF_STREAM.length;
  let started = false;
  const convert = schema.map((f) => converter(f.type, render));
  return {
    batch(rows) {
      const children = fields.map((field, i) => {
        const name = schema[i]!.name;
        const to = convert[i]!;
        const values = new Array<unknown>(rows.length);
        for (let r = 0; r < rows.length; r++) values[r] = to(rows[r]![name] ?? null);
        return columnData(field.type, values);
      });
      const data = arrow.makeData({
        type: new arrow.Struct(fields),
        length: rows.length,
        nullCount: 0,
        children,
      });
      const table = new arrow.Table([new arrow.RecordBatch(arrowSchema, data)]);
      const bytes = arrow.tableToIPC(table, "stream");
      const from = started ? headerBytes : 0;
      started = true;
      return bytes.subarray(from, bytes.length - END_OF_STREAM.length);
    },
    end() {
      if (started) return END_OF_STREAM;
      started = true;
      return headerOnly;
    },
  };
}

function arrowField(name: string, type: Type, render: RenderOptions): arrow.Field {
  const meta = trawlType(type);
  return new arrow.Field(
    name,
    arrowType(type, render),
    true,
    meta ? new Map([["trawl.type", meta]]) : undefined,
  );
}

/** The `trawl.type` metadata of types Arrow has no type of its own for. */
function trawlType(type: Type): string | undefined {
  return type.kind === "IPADDR" || type.kind === "IPNET" || type.kind === "INTERVAL"
    ? type.kind
    : undefined;
}

function arrowType(type: Type, render: RenderOptions): arrow.DataType {
  switch (type.kind) {
    case "BOOLEAN":
      return new arrow.Bool();
    case "INTEGER":
      return new arrow.Int32();
    case "LONG":
      return new arrow.Int64();
    case "DOUBLE":
      return new arrow.Float64();
    case "TIMESTAMP":
      return new arrow.TimestampMillisecond(render.timeZone);
    case "INTERVAL":
      return new arrow.DurationMillisecond();
    case "NULL":
      return new arrow.Null();
    case "ARRAY":
      return new arrow.List(arrowField("item", type.element, render));
    case "TUPLE":
      return new arrow.Struct(type.fields.map((f) => arrowField(f.name, f.type, render)));
    case "STRING":
    case "IPADDR":
    case "IPNET":
    case "ANY":
      return new arrow.Utf8();
  }
}

/** Turns a Trawl value into what the Arrow builder of its type appends (null stays null). */
function converter(type: Type, render: RenderOptions): (v: Value) => unknown {
  switch (type.kind) {
    case "LONG":
    case "INTERVAL":
      return (v) => {
        if (v === null) return null;
        const n = v instanceof Interval ? v.ms : Number(v);
        return BigInt(Math.trunc(n));
      };
    case "TIMESTAMP":
      return (v) => v instanceof Timestamp ? v.ms : null;
    case "INTEGER":
    case "DOUBLE":
      return (v) => typeof v === "number" ? v : null;
    case "BOOLEAN":
      return (v) => typeof v === "boolean" ? v : null;
    case "NULL":
      return () => null;
    case "ARRAY": {
      const element = converter(type.element, render);
      return (v) => Array.isArray(v) ? (v as readonly Value[]).map(element) : null;
    }
    case "TUPLE": {
      const fields = type.fields.map((f: TrawlField) => [f.name, converter(f.type, render)]);
      return (v) => {
        if (v === null || typeof v !== "object" || Array.isArray(v)) return null;
        const tuple = v as Record<string, Value>;
        const out: Record<string, unknown> = {};
        for (const [name, to] of fields as [string, (v: Value) => unknown][]) {
          out[name] = to(tuple[name] ?? null);
        }
        return out;
      };
    }
    case "STRING":
    case "IPADDR":
    case "IPNET":
    case "ANY":
      return (v) => v === null ? null : typeof v === "string" ? v : toText(v, render);
  }
}

const encoder = new TextEncoder();

/**
 * The Arrow data of one column: flat types are laid out directly in typed arrays (an Arrow
 * builder's `append` per value was 6 times slower), nested ones go through a builder.
 */
function columnData(type: arrow.DataType, values: readonly unknown[]): arrow.Data {
  const length = values.length;
  const nullBitmap = new Uint8Array((length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < length; i++) {
    if (values[i] === null) nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  }
  const base = { type, length, nullCount, nullBitmap: nullCount > 0 ? nullBitmap : undefined };
  if (arrow.DataType.isUtf8(type)) {
    const valueOffsets = new Int32Array(length + 1);
    let text = "";
    for (let i = 0; i < length; i++) {
      const v = values[i];
      if (v !== null) text += v as string;
      valueOffsets[i + 1] = text.length;
    }
    let data = encoder.encode(text);
    if (data.length !== text.length) {
      // Not all ASCII: byte offsets differ from character offsets.
      const parts = values.map((v) => v === null ? new Uint8Array(0) : encoder.encode(v as string));
      data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (let i = 0; i < length; i++) {
        data.set(parts[i]!, at);
        at += parts[i]!.length;
        valueOffsets[i + 1] = at;
      }
    }
    return arrow.makeData({ ...base, type: type as arrow.Utf8, valueOffsets, data });
  }
  if (arrow.DataType.isBool(type)) {
    const data = new Uint8Array((length + 7) >> 3);
    for (let i = 0; i < length; i++) if (values[i] === true) data[i >> 3]! |= 1 << (i & 7);
    return arrow.makeData({ ...base, type: type as arrow.Bool, data });
  }
  if (arrow.DataType.isInt(type) || arrow.DataType.isFloat(type)) {
    const data = new (type.ArrayType as new (n: number) => Int32Array | Float64Array)(length);
    for (let i = 0; i < length; i++) if (values[i] !== null) data[i] = values[i] as number;
    return arrow.makeData({ ...base, type: type as arrow.Int32, data: data as Int32Array });
  }
  if (arrow.DataType.isTimestamp(type) || arrow.DataType.isDuration(type)) {
    const data = new BigInt64Array(length);
    for (let i = 0; i < length; i++) {
      const v = values[i];
      if (v !== null) data[i] = typeof v === "bigint" ? v : BigInt(v as number);
    }
    return arrow.makeData({ ...base, type: type as arrow.TimestampMillisecond, data });
  }
  const builder = arrow.makeBuilder({ type, nullValues: [null, undefined] });
  for (const v of values) builder.append(v);
  return builder.finish().flush();
}
