/**
 * Writes a stored table atomically through the tree's `openAtomic` (engine/contracts/resource_tree.ts):
 * on the local disk rows go to a hidden temporary file in the same directory, which is synced
 * and renamed over the target only on commit (engine/fs/atomic_write.ts); in a storage tree the
 * table is one value switched in one commit. Until then, and after an abort or a crash, the
 * previous table stays as it was.
 */

import { createHash } from "node:crypto";
import type { AtomicOutput, TreeFiles } from "../contracts/resource_tree.ts";
import type { Schema } from "../values/types.ts";
import type { Row } from "../values/values.ts";
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

/** Starts writing a table; nothing is visible under `realPath` before `commit`. */
export function createTableWriter(
  files: Pick<TreeFiles, "openAtomic">,
  realPath: string,
  schema: Schema,
): TableWriter {
  const columns = schema.map((f) => f.name);
  const columnIndex = new Map(columns.map((c, i) => [c, i]));
  const headerBytes = Math.max(MIN_HEADER_BYTES, 2 * headerText({ schema, columns }).length + 1024);
  const hash = createHash("sha256");
  let rows = 0;
  let bodyBytes = 0;
  let state: "open" | "committed" | "aborted" = "open";
  const opening = (async () => {
    const out = await files.openAtomic(realPath);
    try {
      await out.write(paddedHeader(new Uint8Array(0), headerBytes));
    } catch (e) {
      await out.abort();
      throw e;
    }
    return out;
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
      const v = row[columns[i]!];
      values[i] = v === undefined ? null : encodeValue(v);
    }
    return JSON.stringify(values);
  }

  async function write(batch: readonly Row[]): Promise<void> {
    if (state !== "open") throw new Error(`the table writer for ${realPath} is ${state}`);
    const out = await opening;
    if (batch.length === 0) return;
    let text = "";
    for (const row of batch) text += encodeRow(row) + "\n";
    const bytes = encoder.encode(text);
    hash.update(bytes);
    await out.write(bytes);
    rows += batch.length;
    bodyBytes += bytes.length;
  }

  async function commit(finalSchema: Schema = schema): Promise<{ rows: number; bytes: number }> {
    if (state !== "open") throw new Error(`the table writer for ${realPath} is ${state}`);
    try {
      const names = new Set(finalSchema.map((f) => f.name));
      const missing = columns.find((c) => !names.has(c));
      if (missing !== undefined) {
        throw new Error(`the final schema of ${realPath} lacks the field '${missing}'`);
      }
      const out = await opening;
      const trailer = encoder.encode(
        trailerText({ rows, bytes: bodyBytes, sha256: hash.digest("hex") }) + "\n",
      );
      await out.write(trailer);
      const header = encoder.encode(headerText({ schema: finalSchema, columns }));
      if (header.length + 1 <= headerBytes) {
        await out.patchStart(paddedHeader(header, headerBytes));
        await out.commit();
      } else {
        await rewriteWithLargerHeader(files, realPath, out, headerBytes, header);
      }
      state = "committed";
      return { rows, bytes: headerBytes + bodyBytes + trailer.length };
    } catch (e) {
      await abort();
      throw e;
    }
  }

  async function abort(): Promise<void> {
    if (state !== "open") return;
    state = "aborted";
    try {
      await (await opening).abort();
    } catch { /* never opened */ }
  }

  return { write, commit, abort };
}

/**
 * Copies the body after a header that did not fit its reserved space into a second replacement
 * of the table, commits that one and drops the first.
 */
async function rewriteWithLargerHeader(
  files: Pick<TreeFiles, "openAtomic">,
  realPath: string,
  first: AtomicOutput,
  oldHeaderBytes: number,
  header: Uint8Array,
): Promise<void> {
  const out = await files.openAtomic(realPath);
  try {
    await out.write(paddedHeader(header, header.length + 1));
    for await (const chunk of first.readFrom(oldHeaderBytes)) await out.write(chunk);
    await out.commit();
  } catch (e) {
    await out.abort();
    throw e;
  } finally {
    await first.abort();
  }
}
