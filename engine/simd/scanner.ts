/**
 * The SIMD scanner (scanner.wat, WebAssembly v128) as JavaScript calls: the structural index of
 * JSON lines (simdjson's first stage) and the positions of one byte (line ends, a delimiter).
 * Each SimdScanner owns an instance with its own memory; what a call returns is a view of that
 * memory, valid until the scanner's next call.
 *
 *   const scanner = new SimdScanner();
 *   const index = scanner.indexJson(bytes, start, end); // null: too large, fall back
 *   index.tokens.subarray(0, index.count)               // positions in `bytes`
 *   const ends = scanner.findByte(bytes, start, end, 0x0a);
 *
 * `scannerPath(reader)` tells which path a reader takes: the scanner ("wasm") or the JavaScript
 * reader ("js"). By default READ_JSON's member paths take the scanner (the sign-ins' nested
 * records read with 16% less CPU) and PARSE's line ends the JavaScript search (the scanner
 * measured slower there); the environment variable TRAWL_SCANNER=wasm or =js sends both one way.
 * Without WebAssembly SIMD in the runtime, always "js". docs/architecture.md has the figures.
 */

import { SCANNER_WASM_BASE64 } from "./scanner_wasm.ts";

/** Pieces longer than this are left to the JavaScript path (memory: about 11 bytes per byte). */
export const SCANNER_MAX_BYTES = 4 * 1024 * 1024;

/** Ends each list of a JsonIndex (above every position). */
export const END = 0xffffffff;

/**
 * The structural index of a piece: lists of positions in the bytes given, each ascending and
 * followed by END (the tokens by four), which the counts do not count.
 */
export interface JsonIndex {
  /** Unescaped quotes, and { } [ ] : , outside strings. */
  readonly tokens: Uint32Array;
  readonly count: number;
  /** Backslashes (a string with one holds escapes). */
  readonly backslashes: Uint32Array;
  readonly backslashCount: number;
  /**
   * Bytes that make their line invalid JSON where a walk of the tokens cannot see it: a control
   * character in a string (a line end in a string also ends it), a backslash outside strings,
   * an escape JSON does not have, a \u without four hex digits. Positions past the bytes given
   * may appear (a \u at the very end).
   */
  readonly errors: Uint32Array;
  readonly errorCount: number;
  /**
   * The start of every line that is one JSON object, valid (grammar, strings, numbers), nested
   * at most 96 deep and ended by "\n": a reader may trust its tokens.
   */
  readonly valid: Uint32Array;
  readonly validCount: number;
  /** For each `{` and `[` token of a valid line (by token number): its closing token's number. */
  readonly jumps: Uint32Array;
  /**
   * When keys were asked for (and the piece is at most SLOTS_MAX_BYTES): for each valid line, in
   * the order of `valid`, a record of `1 + 2 * keys` numbers: its root `{` token's number, then
   * per key the position in `bytes` of the value of the root's member of that key (just past
   * its colon; the last such member) and the number of the first token at or after it (the
   * value's own, or the `,`/`}` after a scalar); END twice where the root has no such member.
   * Null otherwise.
   */
  readonly slots: Uint32Array | null;
}

/**
 * A member of the tree of paths stage 2 follows (json_index_reader.ts builds it): its key, the
 * leaf its value is (-1: none), the members of its value when that is an object a path goes
 * into (null: none), and the range [lo, hi) of the leaves beneath it.
 */
export interface KeyMember {
  readonly key: Uint8Array;
  readonly leaf: number;
  readonly inner: readonly KeyMember[] | null;
  readonly lo: number;
  readonly hi: number;
}

/** The members of the root object that paths start with, and the number of leaves. */
export interface KeyTree {
  readonly root: readonly KeyMember[];
  readonly leaves: number;
}

/** The member lists of a tree, depth first (the root's first), and the bytes of its table. */
function keyLists(tree: KeyTree): { lists: (readonly KeyMember[])[]; size: number } {
  const lists: (readonly KeyMember[])[] = [];
  let size = 0;
  const collect = (list: readonly KeyMember[]) => {
    lists.push(list);
    size += 4 + 24 * list.length;
    for (const m of list) {
      size += m.key.length;
      if (m.inner !== null) collect(m.inner);
    }
  };
  collect(tree.root);
  return { lists, size };
}

/** Pieces longer than this get no `slots` (their room would be large): readers walk them. */
export const SLOTS_MAX_BYTES = 512 * 1024;

export interface ByteHits {
  readonly positions: Uint32Array;
  readonly count: number;
}

interface Exports {
  readonly memory: WebAssembly.Memory;
  indexJson(
    input: number,
    len: number,
    bias: number,
    tok: number,
    esc: number,
    escEnd: number,
    err: number,
    errEnd: number,
  ): number;
  findByte(input: number, len: number, bias: number, byte: number, out: number): number;
  validateLines(
    input: number,
    len: number,
    bias: number,
    tok: number,
    count: number,
    err: number,
    errCount: number,
    jump: number,
    valid: number,
    stack: number,
    keys: number,
    nkeys: number,
    slots: number,
  ): number;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled module, or null when this runtime cannot run it (no WebAssembly SIMD). */
export function scannerModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      const bytes = Uint8Array.from(atob(SCANNER_WASM_BASE64), (c) => c.charCodeAt(0));
      compiled = new WebAssembly.Module(bytes);
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

/** The readers that can take the scanner: READ_JSON's member paths, PARSE's line ends. */
export type ScannerReader = "json" | "lines";

/** Without TRAWL_SCANNER: the path each reader measured faster on (docs/architecture.md). */
const DEFAULT_PATH: Readonly<Record<ScannerReader, "wasm" | "js">> = { json: "wasm", lines: "js" };

/** TRAWL_SCANNER's choice for every reader (undefined: each its default), read once per thread. */
let forced: "wasm" | "js" | undefined | null = null;

/**
 * The path `reader` takes: TRAWL_SCANNER's (`wasm` or `js`) when set, else the reader's default;
 * "js" whenever the runtime has no WebAssembly SIMD. A scan worker reads the same environment.
 */
export function scannerPath(reader: ScannerReader): "wasm" | "js" {
  if (forced === null) {
    let env: string | undefined;
    try {
      env = Deno.env.get("TRAWL_SCANNER");
    } catch {
      env = undefined; // no permission to read the environment: the defaults
    }
    forced = env === "wasm" || env === "js" ? env : undefined;
  }
  const path = forced ?? DEFAULT_PATH[reader];
  return path === "wasm" && scannerModule() !== null ? "wasm" : "js";
}

/** For tests: send every reader `path` from now on in this thread (undefined: the environment's). */
export function setScannerPath(path: "wasm" | "js" | undefined): void {
  forced = path === undefined ? null : path;
}

const HEADER = 64;
const PAD = 64;
const PAGE = 65536;

/** Scanners given back, at most this many kept per thread. */
const POOL_MAX = 4;
const pool: SimdScanner[] = [];

/**
 * A scanner of this thread's pool (one given back by a reader done with it), else a new one. A
 * reader is made for each block of a cached scan (4 MiB): a new instance each time, its memory
 * grown again to a piece's index, cost a fill of the sign-ins a tenth of its time.
 */
export function takeScanner(): SimdScanner {
  return pool.pop() ?? new SimdScanner();
}

/** Gives `scanner` back for a later `takeScanner`: the caller no longer uses it or its views. */
export function giveScanner(scanner: SimdScanner): void {
  if (pool.length < POOL_MAX && !pool.includes(scanner)) pool.push(scanner);
}

/** For tests: the scanners this thread's pool holds. */
export function pooledScanners(): number {
  return pool.length;
}

export class SimdScanner {
  readonly #x: Exports;
  #bytes: Uint8Array;
  #words: Uint32Array;

  constructor() {
    const module = scannerModule();
    if (module === null) throw new Error("WebAssembly SIMD is not available");
    this.#x = new WebAssembly.Instance(module).exports as unknown as Exports;
    this.#bytes = new Uint8Array(this.#x.memory.buffer);
    this.#words = new Uint32Array(this.#x.memory.buffer);
  }

  /**
   * The index of `bytes[start, end)`, which must start outside a string; null when too long.
   * `lines` false skips stage 2 (`valid` then lists no line: for the bench only). `keys` asks
   * for the `slots` of the valid lines: the values of the tree's leaves.
   */
  indexJson(
    bytes: Uint8Array,
    start: number,
    end: number,
    lines = true,
    keys: KeyTree | null = null,
  ): JsonIndex | null {
    const len = end - start;
    if (len > SCANNER_MAX_BYTES) return null;
    const input = HEADER;
    const tok = align(input + len + PAD);
    const tokRoom = len + PAD + 8; // $flatten8 writes up to 7 past the last token
    const esc = tok + 4 * tokRoom;
    const listRoom = indexListRoom(len);
    const err = esc + 4 * listRoom;
    const jump = err + 4 * listRoom;
    const validAt = jump + 4 * tokRoom;
    const validRoom = (len >> 1) + PAD + 1;
    const stack = validAt + 4 * validRoom;
    // The member lists of the key tree and their keys' bytes (keyLists), then the records.
    const table = keys !== null && keys.leaves > 0 && lines && len <= SLOTS_MAX_BYTES
      ? keyLists(keys)
      : null;
    const nkeys = table !== null ? keys!.leaves : 0;
    const keysAt = stack + 4 * 192;
    const slotsAt = align(keysAt + (table?.size ?? 0));
    // A valid line takes 3 bytes at least ("{}\n").
    const stride = 1 + 2 * nkeys;
    const slotsRoom = nkeys > 0 ? (Math.floor(len / 3) + 1) * stride : 0;
    this.#room(slotsAt + 4 * slotsRoom);
    this.#copy(bytes, start, end);
    if (table !== null) this.#writeKeys(table.lists, keysAt);
    // One slot of each list is kept for its end mark.
    const count = this.#x.indexJson(
      input,
      len,
      start,
      tok,
      esc,
      esc + 4 * (listRoom - 1),
      err,
      err + 4 * (listRoom - 1),
    );
    const w = this.#words;
    if (w[2] !== 0) return null; // more backslashes or errors than room: rare, the JS path takes it
    w.fill(END, (tok >> 2) + count, (tok >> 2) + count + 4);
    w[(esc >> 2) + w[0]!] = END;
    w[(err >> 2) + w[1]!] = END;
    const valid = lines
      ? this.#x.validateLines(
        input,
        len,
        start,
        tok,
        count,
        err,
        w[1]!,
        jump,
        validAt,
        stack,
        keysAt,
        nkeys,
        slotsAt,
      )
      : 0;
    w[(validAt >> 2) + valid] = END;
    return {
      tokens: w.subarray(tok >> 2, (tok >> 2) + count + 4),
      count,
      backslashes: w.subarray(esc >> 2, (esc >> 2) + w[0]! + 1),
      backslashCount: w[0]!,
      errors: w.subarray(err >> 2, (err >> 2) + w[1]! + 1),
      errorCount: w[1]!,
      valid: w.subarray(validAt >> 2, (validAt >> 2) + valid + 1),
      validCount: valid,
      jumps: w.subarray(jump >> 2, (jump >> 2) + count),
      slots: nkeys > 0 ? w.subarray(slotsAt >> 2, (slotsAt >> 2) + valid * stride) : null,
    };
  }

  /** The positions of `byte` in `bytes[start, end)`. */
  findByte(bytes: Uint8Array, start: number, end: number, byte: number): ByteHits {
    const len = end - start;
    const input = HEADER;
    const out = align(input + len + PAD);
    this.#room(out + 4 * (len + PAD));
    this.#copy(bytes, start, end);
    const count = this.#x.findByte(input, len, start, byte, out);
    return { positions: this.#words.subarray(out >> 2, (out >> 2) + count), count };
  }

  /**
   * Writes the member lists at `at` (each: a count, then per member six u32s: key length, key
   * address, leaf, inner list address, lo, hi; END for none), then the keys' bytes.
   */
  #writeKeys(lists: (readonly KeyMember[])[], at: number): void {
    const w = this.#words;
    const addresses = new Map<readonly KeyMember[], number>();
    let p = at;
    for (const list of lists) {
      addresses.set(list, p);
      p += 4 + 24 * list.length;
    }
    for (const list of lists) {
      let e = addresses.get(list)! >> 2;
      w[e++] = list.length;
      for (const m of list) {
        w[e] = m.key.length;
        w[e + 1] = p;
        this.#bytes.set(m.key, p);
        p += m.key.length;
        w[e + 2] = m.leaf < 0 ? END : m.leaf;
        w[e + 3] = m.inner === null ? END : addresses.get(m.inner)!;
        w[e + 4] = m.lo;
        w[e + 5] = m.hi;
        e += 6;
      }
    }
  }

  /** Copies the bytes to the input at HEADER and pads them with spaces. */
  #copy(bytes: Uint8Array, start: number, end: number): void {
    const m = this.#bytes;
    m.set(bytes.subarray(start, end), HEADER);
    m.fill(0x20, HEADER + end - start, HEADER + end - start + PAD);
  }

  #room(size: number): void {
    const memory = this.#x.memory;
    if (memory.buffer.byteLength >= size) return;
    memory.grow(Math.ceil((size - memory.buffer.byteLength) / PAGE));
    this.#bytes = new Uint8Array(memory.buffer);
    this.#words = new Uint32Array(memory.buffer);
  }
}

/** Room for backslashes, and for errors, in the index of `len` bytes (more: indexJson gives null). */
export function indexListRoom(len: number): number {
  return (len >> 3) + PAD;
}

function align(n: number): number {
  return (n + 63) & ~63;
}
