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
    const text = String.fromCharCode.apply(null, b.subarray(start, stop) as unknown as number[]);
    bytes.set(b.subarray(start, stop), at);
    this.#lengths[slot] = n;
    this.#texts[slot] = text;
    return text;
  }
}
