/**
 * A table of the strings of short plain ASCII texts read before, shared by the byte readers
 * (JSON lines, PARSE's byte scanner): a value that recurs (a country, a result code, a path, the
 * time of a second) is neither decoded again nor made a new string (whose hash a grouping would
 * compute again).
 */

const BACKSLASH = 0x5c;

/** Texts up to this many bytes are kept by ShortStrings. */
const SHORT_BYTES = 32;
/** Entries of ShortStrings (a power of two). */
const SHORT_SLOTS = 1024;

/** Texts of plain ASCII up to this many bytes are made by a call of fixed arity (asciiText). */
const FIXED_ARITY = 64;

/**
 * `String.fromCharCode` called with one argument per byte, a function per length: a call of fixed
 * arity is several times cheaper than `apply` over a typed array, which copies the array into
 * the arguments first (15 bytes: 37 against 247 ns a string, measured in one run).
 */
const BY_LENGTH: readonly ((b: Uint8Array, start: number) => string)[] = Array.from(
  { length: FIXED_ARITY + 1 },
  (_, n) =>
    new Function(
      "f",
      `return (b, s) => f(${Array.from({ length: n }, (_, i) => `b[s + ${i}]`).join(", ")});`,
    )(String.fromCharCode),
);

/** The text of `b[start, end)`, whose bytes are all below 0x80 (not checked). */
export function asciiText(b: Uint8Array, start: number, end: number): string {
  const n = end - start;
  return n <= FIXED_ARITY
    ? BY_LENGTH[n]!(b, start)
    : String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** The text of UTF-8 bytes `b[start, end)`: ASCII directly, other bytes through the decoder. */
export function bytesText(b: Uint8Array, start: number, end: number): string {
  if (end - start <= 256) {
    let ascii = true;
    for (let i = start; i < end; i++) {
      if (b[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return asciiText(b, start, end);
  }
  return decoder.decode(b.subarray(start, end));
}

/**
 * The strings of short plain ASCII texts read before, so that a value that recurs (a country,
 * a result code) is neither decoded again nor made a new string (whose hash a grouping would
 * compute again): a table indexed by a hash of the bytes, an entry taken when its bytes equal.
 */
export class ShortStrings {
  readonly #bytes = new Uint8Array(SHORT_SLOTS * SHORT_BYTES);
  readonly #lengths = new Int8Array(SHORT_SLOTS).fill(-1);
  readonly #texts: string[] = new Array<string>(SHORT_SLOTS).fill("");
  /** Texts found in the table so far. */
  hits = 0;

  /**
   * The text of `b[start, stop)`, or undefined when it is longer than SHORT_BYTES or holds a
   * byte that is not plain ASCII (a backslash, or above 0x7f). Control characters are the
   * caller's to refuse.
   */
  get(b: Uint8Array, start: number, stop: number): string | undefined {
    const n = stop - start;
    if (n > SHORT_BYTES) return undefined;
    let h = n;
    for (let i = start; i < stop; i++) {
      const c = b[i]!;
      if (c >= 0x80 || c === BACKSLASH) return undefined;
      h = (Math.imul(h, 31) + c) | 0;
    }
    const slot = (h ^ (h >>> 10)) & (SHORT_SLOTS - 1);
    const at = slot * SHORT_BYTES;
    const bytes = this.#bytes;
    if (this.#lengths[slot] === n) {
      let j = 0;
      while (j < n && bytes[at + j] === b[start + j]) j++;
      if (j === n) {
        this.hits++;
        return this.#texts[slot];
      }
    }
    const text = asciiText(b, start, stop);
    for (let j = 0; j < n; j++) bytes[at + j] = b[start + j]!;
    this.#lengths[slot] = n;
    this.#texts[slot] = text;
    return text;
  }
}
