/**
 * Rendered batches a scan worker made while it had no credit to post them (share_run.ts): kept
 * in a file and read back in order as credits come. The merge takes the shares' rows in order,
 * so a share not yet at its turn would otherwise stop after ROW_CREDIT batches and leave its
 * core idle until the shares before it are done; with a backlog it scans on at full speed, its
 * memory bounded (a batch at a time, and the row ends of the batches waiting: 4 bytes a row).
 *
 * The file is removed as soon as it is opened: it lives as long as its handle, so a worker
 * terminated mid-share leaves nothing behind (but for a crash between the two steps, which the
 * sweep of the results folder at the server's start removes).
 */

import { RenderedRows } from "../../render/rendered.ts";

export class RenderedBacklog {
  /** The file, written through one handle and read through another: neither ever seeks. */
  #file: Deno.FsFile | undefined;
  #reader: Deno.FsFile | undefined;
  /** The batches waiting, oldest first: their lengths in the file and their row ends. */
  readonly #parts: { readonly length: number; readonly ends: Uint32Array }[] = [];
  #head = 0;
  /** Bytes waiting in the file now, and the most that ever waited. */
  bytes = 0;
  peakBytes = 0;

  /** `dir`: the folder of the file (the server's results folder), made when first needed. */
  constructor(readonly dir: string) {}

  /** Batches waiting. */
  get size(): number {
    return this.#parts.length - this.#head;
  }

  /**
   * Adds a batch at the end; its bytes are written out and their buffer let go of at once
   * (detached, the batch's bytes read empty after), not at a garbage collection.
   */
  async push(part: RenderedRows): Promise<void> {
    const file = this.#file ?? await this.#open();
    const length = part.bytes.length;
    for (let written = 0; written < length;) {
      written += await file.write(part.bytes.subarray(written));
    }
    const buffer = part.bytes.buffer;
    if (!buffer.detached) buffer.transfer(0);
    this.#parts.push({ length, ends: part.ends });
    this.bytes += length;
    this.peakBytes = Math.max(this.peakBytes, this.bytes);
  }

  /** The oldest batch, read back; undefined when none waits. */
  async shift(): Promise<RenderedRows | undefined> {
    if (this.size === 0) return undefined;
    const { length, ends } = this.#parts[this.#head++]!;
    const bytes = new Uint8Array(length);
    const reader = this.#reader!;
    for (let got = 0; got < length;) {
      const n = await reader.read(bytes.subarray(got));
      if (n === null) throw new Error("a scan worker's backlog file is shorter than it wrote");
      got += n;
    }
    this.bytes -= length;
    if (this.size === 0) {
      // Emptied: the next batches are written from the start again, the file cut back.
      this.#parts.length = this.#head = 0;
      await this.#file!.truncate(0);
      await this.#file!.seek(0, Deno.SeekMode.Start);
      await reader.seek(0, Deno.SeekMode.Start);
    }
    return new RenderedRows(bytes, ends);
  }

  /** Closes (and so deletes) the file. */
  close(): void {
    this.#file?.close();
    this.#reader?.close();
    this.#file = this.#reader = undefined;
  }

  async #open(): Promise<Deno.FsFile> {
    await Deno.mkdir(this.dir, { recursive: true });
    const path = await Deno.makeTempFile({ dir: this.dir, prefix: "share-backlog-" });
    const file = await Deno.open(path, { write: true });
    let reader: Deno.FsFile | undefined;
    try {
      reader = await Deno.open(path, { read: true });
      await Deno.remove(path);
    } catch (e) {
      file.close();
      reader?.close();
      throw e;
    }
    this.#file = file;
    this.#reader = reader;
    return file;
  }
}
