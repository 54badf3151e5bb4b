/**
 * Reads a few top-level fields of JSON lines straight from their UTF-8 bytes, for READ_JSON
 * when a query reads only some fields: no text is decoded but the values read, and no object
 * is built but the row. It takes the common shape of log lines, a flat object (values are
 * strings, numbers, booleans and nulls; no backslash in a key), and checks it against JSON's
 * grammar exactly (strings with their escapes and control characters, numbers, literals,
 * white space, commas); a line of any other shape, valid or not, gets `undefined` and the
 * caller decodes it and hands it to `JSON.parse`, which decides what it holds. A key that
 * appears twice gives its last value, as with JSON.parse.
 *
 *   const reader = jsonLineReader(["status"])!;
 *   const row = reader.read(bytes, at); // a row, then reader.next is the start of the next line
 *
 * Lines must end with "\n" (the caller gives the fallback the last line of a file without one).
 */

import type { Row, Value } from "../values.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NL = 0x0a;

export interface JsonLineReader {
  /**
   * The row of `names` of the line starting at `from` (ended by "\n"), or undefined when the
   * line is not a flat object this reader checks (the caller must parse it).
   */
  read(bytes: Uint8Array, from: number): Row | undefined;
  /** After a row: the offset just past the line's "\n". */
  readonly next: number;
}

/** A reader of `names`, or null for names it cannot look for in bytes (non-ASCII, __proto__). */
export function jsonLineReader(names: readonly string[]): JsonLineReader | null {
  // Non-ASCII names would need keys decoded to compare; `__proto__` keeps its own rules.
  if (names.some((n) => n === "__proto__" || /[^\x20-\x7e]/.test(n))) return null;
  const keys = names.map((n) => Uint8Array.from(n, (c) => c.charCodeAt(0)));
  const count = keys.length;
  const values: Value[] = names.map(() => null);
  // One object literal per row: all rows share one shape (see extractor.ts's rowBuilder).
  const build = new Function(
    "v",
    `return { ${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(", ")} };`,
  ) as (v: Value[]) => Row;
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  // The bytes read four at a time, for the long runs of plain characters in strings.
  let wordsOf: Uint8Array | null = null;
  let words: Uint32Array | null = null;

  const reader = {
    next: 0,
    read(b: Uint8Array, from: number): Row | undefined {
      if (b !== wordsOf) {
        wordsOf = b;
        words = wordView(b);
      }
      for (let k = 0; k < count; k++) values[k] = null;
      let i = skipSpace(b, from);
      if (b[i] !== 0x7b /* { */) return undefined;
      i = skipSpace(b, i + 1);
      if (b[i] === 0x7d /* } */) i++;
      else {
        while (true) {
          // The key: no backslash, so that its bytes are its text.
          if (b[i] !== QUOTE) return undefined;
          const keyStart = ++i;
          let c = b[i];
          while (c !== QUOTE) {
            if (c < 0x20 || c === BACKSLASH) return undefined;
            c = b[++i];
          }
          const keyEnd = i;
          i = skipSpace(b, i + 1);
          if (b[i] !== 0x3a /* : */) return undefined;
          i = skipSpace(b, i + 1);
          let slot = -1;
          for (let k = 0; k < count; k++) {
            if (sameKey(b, keyStart, keyEnd, keys[k])) {
              slot = k;
              break;
            }
          }
          c = b[i];
          if (c === QUOTE) {
            const valueStart = ++i;
            let escaped = false;
            if (words !== null) i = skipPlain(b, words, i);
            c = b[i];
            while (c !== QUOTE) {
              if (c < 0x20) return undefined;
              if (c === BACKSLASH) {
                const e = b[++i];
                if (e === 0x75 /* u */) {
                  if (
                    !isHex(b[i + 1]) || !isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4])
                  ) {
                    return undefined;
                  }
                  i += 4;
                } else if (!isEscape(e)) return undefined;
                escaped = true;
              }
              c = b[++i];
            }
            if (slot >= 0) {
              const text = decoder.decode(b.subarray(valueStart, i));
              values[slot] = escaped ? JSON.parse(`"${text}"`) as string : text;
            }
            i++;
          } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
            const numberStart = i;
            const negative = c === 0x2d;
            if (negative) c = b[++i];
            let n = 0;
            let digits = 0;
            if (c === 0x30) {
              c = b[++i];
              digits = 1;
            } else if (c >= 0x31 && c <= 0x39) {
              while (c >= 0x30 && c <= 0x39) {
                n = n * 10 + (c - 0x30);
                digits++;
                c = b[++i];
              }
            } else return undefined;
            let plain = true;
            if (c === 0x2e /* . */) {
              plain = false;
              c = b[++i];
              if (!(c >= 0x30 && c <= 0x39)) return undefined;
              while (c >= 0x30 && c <= 0x39) c = b[++i];
            }
            if (c === 0x65 || c === 0x45 /* e E */) {
              plain = false;
              c = b[++i];
              if (c === 0x2b || c === 0x2d) c = b[++i];
              if (!(c >= 0x30 && c <= 0x39)) return undefined;
              while (c >= 0x30 && c <= 0x39) c = b[++i];
            }
            if (slot >= 0) {
              // Up to 15 digits an integer is exact in a double; others take Number's rounding.
              values[slot] = plain && digits <= 15
                ? (negative ? -n : n)
                : Number(String.fromCharCode(...b.subarray(numberStart, i)));
            }
          } else if (c === 0x74 /* t */) {
            if (b[i + 1] !== 0x72 || b[i + 2] !== 0x75 || b[i + 3] !== 0x65) return undefined;
            if (slot >= 0) values[slot] = true;
            i += 4;
          } else if (c === 0x66 /* f */) {
            if (b[i + 1] !== 0x61 || b[i + 2] !== 0x6c || b[i + 3] !== 0x73 || b[i + 4] !== 0x65) {
              return undefined;
            }
            if (slot >= 0) values[slot] = false;
            i += 5;
          } else if (c === 0x6e /* n */) {
            if (b[i + 1] !== 0x75 || b[i + 2] !== 0x6c || b[i + 3] !== 0x6c) return undefined;
            if (slot >= 0) values[slot] = null;
            i += 4;
          } else return undefined; // nested values and everything that is not JSON
          i = skipSpace(b, i);
          c = b[i];
          if (c === 0x2c /* , */) {
            i = skipSpace(b, i + 1);
            continue;
          }
          if (c !== 0x7d /* } */) return undefined;
          i++;
          break;
        }
      }
      i = skipSpace(b, i);
      if (b[i] !== NL) return undefined;
      reader.next = i + 1;
      return build(values);
    },
  };
  return reader;
}

/** The bytes of `b` as 32-bit words (whole words only), or null when `b` is not aligned. */
export function wordView(b: Uint8Array): Uint32Array | null {
  return (b.byteOffset & 3) === 0 ? new Uint32Array(b.buffer, b.byteOffset, b.length >> 2) : null;
}

/**
 * Past the plain bytes from `i` on (neither a quote, a backslash nor below 0x20), a word at a
 * time where the bytes are aligned; stops at or before the first other byte, which the byte
 * loop then looks at. A word holds such a byte exactly when one of the three tests below
 * (a zero byte after XOR with the quote or the backslash, a byte below 0x20) sets a high bit.
 */
function skipPlain(b: Uint8Array, words: Uint32Array, i: number): number {
  while ((i & 3) !== 0) {
    const c = b[i];
    if (c === QUOTE || c === BACKSLASH || c < 0x20) return i;
    i++;
  }
  let w = i >> 2;
  const n = words.length;
  while (w < n) {
    const v = words[w];
    const q = v ^ 0x22222222;
    const s = v ^ 0x5c5c5c5c;
    if (
      ((((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s) | ((v - 0x20202020) & ~v)) &
        0x80808080) !== 0
    ) break;
    w++;
  }
  return w << 2;
}

/** Past JSON white space within a line ("\n" ends the line instead). */
function skipSpace(b: Uint8Array, i: number): number {
  let c = b[i];
  while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
  return i;
}

function sameKey(b: Uint8Array, start: number, end: number, key: Uint8Array): boolean {
  if (end - start !== key.length) return false;
  for (let j = 0; j < key.length; j++) if (b[start + j] !== key[j]) return false;
  return true;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** The characters after a backslash that JSON allows, besides `u`. */
function isEscape(c: number): boolean {
  return c === QUOTE || c === BACKSLASH || c === 0x2f || c === 0x62 || c === 0x66 ||
    c === 0x6e || c === 0x72 || c === 0x74;
}
