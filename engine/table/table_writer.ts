/**
 * Writes a stored table atomically: rows go to a hidden temporary file in the same directory
 * (`.<name>.tmp-<random>`), which is synced and renamed over the target only on commit. Until
 * then, and after an abort or a crash, the previous table stays as it was.
 */

import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import type { Schema } from "../types.ts";
import type { Row } from "../values.ts";
import { encodeValue } from "./sxt_values.ts";
import { headerText, MIN_HEADER_BYTES, paddedHeader, trailerText } from "./sxt_format.ts";

export interface TableWriter {
  /** Appends rows; fields not in the schema are kept as new columns (see commit). */
  write(rows: readonly Row[]): Promise<void>;
  /**
   * Finishes the file and replaces the table. `finalSchema` (default: the schema given at the
   * start) may have widened while writing; it must name every field the rows had.
   */
  commit(finalSchema?: Schema): Promise<{ rows: number; bytes: number }>;
  /** Drops the temporary file; the previous table is untouched. Safe to call more than once. */
  abort(): Promise<void>;
}

const encoder = new TextEncoder();

/**
 * Bytes of a table's name kept in its temporary file's name; a longer one is cut and followed by
 * a hash of the whole, so the temporary name stays within the 255 bytes file systems allow.
 */
const TEMP_NAME_BYTES = 160;

/** The temporary file name used while writing `realPath`: hidden, in the same directory. */
export function tempPathFor(realPath: string): string {
  const random = crypto.getRandomValues(new Uint8Array(6));
  const suffix = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  return join(dirname(realPath), `.${tempStem(basename(realPath))}.tmp-${suffix}`);
}

function tempStem(name: string): string {
  if (encoder.encode(name).length <= TEMP_NAME_BYTES) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 16);
  // Cut by code points under the byte budget (a UTF-8 character takes up to 4 bytes).
  let stem = "";
  for (const c of name) {
    if (encoder.encode(stem + c).length > TEMP_NAME_BYTES - 17) break;
    stem += c;
  }
  return `${stem}~${hash}`;
}

/** Starts writing a table; nothing is visible under `realPath` before `commit`. */
export function createTableWriter(realPath: string, schema: Schema): TableWriter {
  const tempPath = tempPathFor(realPath);
  const columns = schema.map((f) => f.name);
  const columnIndex = new Map(columns.map((c, i) => [c, i]));
  const headerBytes = Math.max(MIN_HEADER_BYTES, 2 * headerText({ schema, columns }).length + 1024);
  const hash = createHash("sha256");
  let rows = 0;
  let bodyBytes = 0;
  let state: "open" | "committed" | "aborted" = "open";
  const opening = (async () => {
    const file = await Deno.open(tempPath, { write: true, createNew: true });
    await writeAll(file, paddedHeader(new Uint8Array(0), headerBytes));
    return file;
  })();
  opening.catch(() => {}); // reported by the first write or commit

  function encodeRow(row: Row): string {
    const keys = Object.keys(row);
    if (keys.length > columns.length || keys.some((k) => !columnIndex.has(k))) {
      for (const k of keys) {
        if (!columnIndex.has(k)) {
          columnIndex.set(k, columns.length);
          columns.push(k);
        }
      }
    }
    const values = new Array(columns.length);
    for (let i = 0; i < columns.length; i++) {
      const v = row[columns[i]];
      values[i] = v === undefined ? null : encodeValue(v);
    }
    return JSON.stringify(values);
  }

  async function write(batch: readonly Row[]): Promise<void> {
    if (state !== "open") throw new Error(`the table writer for ${realPath} is ${state}`);
    const file = await opening;
    if (batch.length === 0) return;
    let text = "";
    for (const row of batch) text += encodeRow(row) + "\n";
    const bytes = encoder.encode(text);
    hash.update(bytes);
    await writeAll(file, bytes);
    rows += batch.length;
    bodyBytes += bytes.length;
  }

  async function commit(finalSchema: Schema = schema): Promise<{ rows: number; bytes: number }> {
    if (state !== "open") throw new Error(`the table writer for ${realPath} is ${state}`);
    let finalPath = tempPath;
    try {
      const names = new Set(finalSchema.map((f) => f.name));
      const missing = columns.find((c) => !names.has(c));
      if (missing !== undefined) {
        throw new Error(`the final schema of ${realPath} lacks the field '${missing}'`);
      }
      const file = await opening;
      const trailer = encoder.encode(
        trailerText({ rows, bytes: bodyBytes, sha256: hash.digest("hex") }) + "\n",
      );
      await writeAll(file, trailer);
      const header = encoder.encode(headerText({ schema: finalSchema, columns }));
      if (header.length + 1 <= headerBytes) {
        await file.seek(0, Deno.SeekMode.Start);
        await writeAll(file, paddedHeader(header, headerBytes));
        await file.sync();
        file.close();
      } else {
        file.close();
        finalPath = await rewriteWithLargerHeader(realPath, tempPath, headerBytes, header);
      }
      await Deno.rename(finalPath, realPath);
      state = "committed";
      await syncDirectory(dirname(realPath));
      return { rows, bytes: headerBytes + bodyBytes + trailer.length };
    } catch (e) {
      await abort();
      if (finalPath !== tempPath) await Deno.remove(finalPath).catch(() => {});
      throw e;
    }
  }

  async function abort(): Promise<void> {
    if (state !== "open") return;
    state = "aborted";
    try {
      (await opening).close();
    } catch { /* already closed, or never opened */ }
    await Deno.remove(tempPath).catch(() => {});
  }

  return { write, commit, abort };
}

/** Copies the body after a header that did not fit its reserved space into a new temp file. */
async function rewriteWithLargerHeader(
  realPath: string,
  oldPath: string,
  oldHeaderBytes: number,
  header: Uint8Array,
): Promise<string> {
  const newPath = tempPathFor(realPath);
  const out = await Deno.open(newPath, { write: true, createNew: true });
  try {
    await writeAll(out, paddedHeader(header, header.length + 1));
    const src = await Deno.open(oldPath, { read: true });
    try {
      await src.seek(oldHeaderBytes, Deno.SeekMode.Start);
      const buf = new Uint8Array(1 << 20);
      for (;;) {
        const n = await src.read(buf);
        if (n === null) break;
        await writeAll(out, buf.subarray(0, n));
      }
    } finally {
      src.close();
    }
    await out.sync();
  } catch (e) {
    out.close();
    await Deno.remove(newPath).catch(() => {});
    throw e;
  }
  out.close();
  await Deno.remove(oldPath).catch(() => {});
  return newPath;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await file.write(bytes.subarray(off));
}

/** Makes the rename durable; not every platform can open a directory, which is harmless. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const d = await Deno.open(dir, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch { /* best effort */ }
}
