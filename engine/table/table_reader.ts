/**
 * Reads stored tables (docs/sxt-format.md) as a stream: 1 MiB reads, batches of about a
 * thousand rows, never the whole file in memory. A torn or corrupt file fails with a
 * CorruptTable naming the table (by the name the caller gives: its tree path, never the host
 * path of its location) and what is wrong; because the checksum covers the whole body, that
 * error can come after some batches were already delivered.
 */

import { createHash } from "node:crypto";
import { type Schema, type Type, typeToString } from "../values/types.ts";
import type { TreeFiles } from "../contracts/resource_tree.ts";
import {
  Interval,
  IpAddr,
  IpNet,
  isTuple,
  type Row,
  Timestamp,
  type Value,
} from "../values/values.ts";
import { decodeValue } from "./sxt_values.ts";
import { parseHeader, parseTrailer, type SxtHeader, type SxtTrailer } from "./sxt_format.ts";

const BATCH_ROWS = 1000;
const NEWLINE = 10;
const OPEN_BRACE = 123;

/** A stored table whose bytes are not a whole table; the message names it and the problem. */
export class CorruptTable extends Error {
  constructor(name: string, what: string) {
    super(`stored table ${name} is corrupt: ${what}`);
    this.name = "CorruptTable";
  }
}

/** Chunks of a file, read when asked. */
interface ChunkReader {
  read(): Promise<Uint8Array | null>;
  close(): void;
}

/** Opens a table at a location of the tree's file operations. */
async function openChunks(
  files: TreeFiles,
  realPath: string,
  signal?: AbortSignal,
): Promise<ChunkReader> {
  const stream = await files.open(realPath, signal ?? new AbortController().signal);
  const reader = stream.getReader();
  return {
    async read() {
      const { done, value } = await reader.read();
      return done ? null : value;
    },
    close() {
      reader.cancel().catch(() => {});
    },
  };
}

/**
 * The schema of a stored table, from its header line only. `name` is what messages call it
 * (the tree path; by default the location).
 */
export async function readTableSchema(
  files: TreeFiles,
  realPath: string,
  name = realPath,
): Promise<Schema> {
  const file = await openChunks(files, realPath);
  try {
    const { header } = await readHeader(file, name);
    return header.schema;
  } finally {
    file.close();
  }
}

/** The rows of a stored table, in batches; `name` as for readTableSchema. */
export async function* readTable(
  files: TreeFiles,
  realPath: string,
  signal?: AbortSignal,
  name = realPath,
): AsyncIterable<readonly Row[]> {
  const file = await openChunks(files, realPath, signal);
  try {
    const { header, rest } = await readHeader(file, name);
    const decodeRow = rowDecoder(header);
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const hash = createHash("sha256");
    let trailer: SxtTrailer | null = null;
    let rows = 0;
    let bodyBytes = 0;
    let line = 2;
    let batch: Row[] = [];
    const fail = (what: string): never => {
      throw new CorruptTable(name, what);
    };
    let buf = rest;
    let eof = false;
    for (;;) {
      signal?.throwIfAborted();
      const lastNl = buf.lastIndexOf(NEWLINE);
      if (lastNl < 0) {
        if (eof) break;
        const chunk = await file.read();
        if (chunk === null) eof = true;
        else buf = concat(buf, chunk);
        continue;
      }
      if (trailer) fail("data after the trailer");
      const complete = buf.subarray(0, lastNl + 1);
      buf = buf.slice(lastNl + 1);
      // The trailer is the last line of the file: only the last line of a block can be it.
      const lastStart = complete.lastIndexOf(NEWLINE, lastNl - 1) + 1;
      const body = complete[lastStart] === OPEN_BRACE ? complete.subarray(0, lastStart) : complete;
      if (body.length > 0) {
        hash.update(body);
        bodyBytes += body.length;
        let text: string;
        try {
          text = decoder.decode(body);
        } catch {
          fail(`invalid UTF-8 near line ${line}`);
        }
        let start = 0;
        for (;;) {
          const nl = text!.indexOf("\n", start);
          if (nl < 0) break;
          batch.push(decodeRow(text!.slice(start, nl), line, fail));
          start = nl + 1;
          line++;
          rows++;
          if (batch.length >= BATCH_ROWS) {
            yield batch;
            batch = [];
          }
        }
      }
      if (body !== complete) {
        try {
          trailer = parseTrailer(decoder.decode(complete.subarray(lastStart, lastNl)));
        } catch (e) {
          fail(`${(e as Error).message} at line ${line}`);
        }
      }
    }
    if (buf.length > 0) fail(`the last line is incomplete (line ${line}): the file is torn`);
    if (!trailer) fail("no trailer: the file was not completely written");
    if (trailer!.rows !== rows) {
      fail(`the trailer counts ${trailer!.rows} rows, the file has ${rows}`);
    }
    if (trailer!.bytes !== bodyBytes || trailer!.sha256 !== hash.digest("hex")) {
      fail("the checksum of the rows does not match the trailer");
    }
    if (batch.length > 0) yield batch;
  } finally {
    file.close();
  }
}

function rowDecoder(
  header: SxtHeader,
): (text: string, line: number, fail: (what: string) => never) => Row {
  const positions = header.schema.map((f) => header.columns.indexOf(f.name));
  const names = header.schema.map((f) => f.name);
  // Null for a column that takes any value (STRING, ANY): nothing to check per row.
  const checks = header.schema.map((f) => fits(f.type));
  const width = header.columns.length;
  return (text, line, fail) => {
    let values: unknown;
    try {
      values = JSON.parse(text);
    } catch {
      fail(`line ${line} is not valid JSON`);
    }
    // Rows written before a column was added are shorter: the missing values are null.
    if (!Array.isArray(values) || values.length > width) {
      fail(`line ${line} is not a row of at most ${width} values`);
    }
    const row: Row = {};
    for (let i = 0; i < names.length; i++) {
      const p = positions[i]!;
      let v: Value = null;
      if (p >= 0 && p < (values as unknown[]).length) {
        try {
          v = decodeValue((values as unknown[])[p]);
        } catch (e) {
          fail(`line ${line}: ${(e as Error).message}`);
        }
        const check = checks[i]!;
        if (check !== null && !check(v)) {
          fail(
            `line ${line}: column ${names[i]} holds a value that is not ${
              typeToString(header.schema[i]!.type)
            }`,
          );
        }
      }
      row[names[i]!] = v;
    }
    return row;
  };
}

/**
 * Whether a value may stand in a column of `type`: the header's types hold for every row, so
 * that a file written by hand cannot feed the engine an address where it adds numbers. Null
 * fits any column (rows written before a column was added have none); STRING, the type of a
 * column whose data mixed kinds (widen()), and ANY take anything, as the writer stores them:
 * for those, null (nothing to check).
 */
function fits(type: Type): ((v: Value) => boolean) | null {
  switch (type.kind) {
    case "STRING":
    case "ANY":
      return null;
    case "NULL":
      return (v) => v === null;
    case "BOOLEAN":
      return (v) => v === null || typeof v === "boolean";
    case "INTEGER":
    case "LONG":
      return (v) => v === null || (typeof v === "number" && Number.isInteger(v));
    case "DOUBLE":
      return (v) => v === null || typeof v === "number";
    case "TIMESTAMP":
      return (v) => v === null || v instanceof Timestamp;
    case "INTERVAL":
      return (v) => v === null || v instanceof Interval;
    case "IPADDR":
      return (v) => v === null || v instanceof IpAddr;
    case "IPNET":
      return (v) => v === null || v instanceof IpNet;
    case "ARRAY": {
      const element = fits(type.element) ?? (() => true);
      return (v) => v === null || (Array.isArray(v) && v.every(element));
    }
    case "TUPLE": {
      const fields = type.fields.map((f) => [f.name, fits(f.type) ?? (() => true)] as const);
      return (v) =>
        v === null ||
        (isTuple(v) && fields.every(([name, check]) => check(v[name] ?? null)));
    }
  }
}

async function readHeader(
  file: ChunkReader,
  name: string,
): Promise<{ header: SxtHeader; rest: Uint8Array }> {
  let buf: Uint8Array = new Uint8Array(0);
  for (;;) {
    const nl = buf.indexOf(NEWLINE);
    if (nl >= 0) {
      try {
        const header = parseHeader(new TextDecoder().decode(buf.subarray(0, nl)).trimEnd());
        return { header, rest: buf.slice(nl + 1) };
      } catch (e) {
        throw new CorruptTable(name, (e as Error).message);
      }
    }
    const chunk = await file.read();
    if (chunk === null) {
      throw new CorruptTable(name, "no complete header line");
    }
    buf = concat(buf, chunk);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
