/**
 * Reads a few fields of JSON lines straight from their UTF-8 bytes, for READ_JSON when a query
 * reads only some fields: no text is decoded but the values read, and no object is built but
 * the row and the nested values asked for. Nested objects and arrays that nothing reads are
 * stepped over (checked, never built); one that is read becomes a value by
 * `JSON.parse` of its own bytes only. A field path (`a.b.c`, `a[0].b`) is followed into the
 * nested values without building them. Every line taken is checked against JSON's grammar
 * exactly (strings with their escapes and control characters, numbers, literals, white space,
 * commas, nesting); a line the reader cannot take (not an object, invalid, a backslash in a key
 * on the way to a value, nesting deeper than 100) gets `undefined` and the caller decodes it and
 * hands it to `JSON.parse`, which decides what it holds. A key that appears twice gives its
 * last value, as with JSON.parse.
 *
 *   const reader = jsonLineReader(["status"])!;
 *   const row = reader.read(bytes, at); // a row, then reader.next is the start of the next line
 *   const paths = jsonPathReader([["status", "errorCode"], ["tags", 0]])!;
 *   const values = paths.read(bytes, at); // [errorCode, tags[0]], each null where absent
 *
 * Lines must end with "\n" (the caller gives the fallback the last line of a file without one).
 *
 * Where the time goes: most bytes of a log record are in strings, which are stepped over four
 * bytes at a time (`skipPlain`: one word test for a quote, a backslash or a control character,
 * and the offset of the first from its lowest flag); a key is matched by its length first (a
 * table per object of the paths), so most keys have no byte compared; a short ASCII string read
 * is taken from a table of the texts made before (`ShortStrings`), not decoded. The scan of a
 * record never stops at the last wanted value: the rest must still be checked (an invalid line
 * goes to JSON.parse, which refuses it) and a later repeat of a key replaces what it gave.
 * `TypedArray.prototype.indexOf` is not used to find a string's end: a call costs about as much
 * as the word loop over a whole key or value of a log record.
 */

import type { Row, Value } from "../values/values.ts";
import { generatedFunction } from "../values/generated_code.ts";
import { ShortStrings } from "../values/short_strings.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NL = 0x0a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
/**
 * Deeper lines go to JSON.parse, which decides, and READ_JSON's rule for records nested too
 * deep applies there (kept below that rule's depth, so that it alone decides).
 */
export const MAX_DEPTH = 100;

/** In Steps.byLength: several members have keys of this length. */
export const MANY_OF_LENGTH = -2;

/** A field path: member names and array indexes from the top-level object down. */
export type JsonPath = readonly (string | number)[];

export interface JsonLineReader {
  /**
   * The row of `names` of the line starting at `from` (ended by "\n"), or undefined when the
   * line is not an object this reader checks (the caller must parse it).
   */
  read(bytes: Uint8Array, from: number): Row | undefined;
  /** After a row: the offset just past the line's "\n". */
  readonly next: number;
  /** As JsonPathReader.prepare. */
  prepare(bytes: Uint8Array, start: number, end: number): void;
  /** As JsonPathReader.release. */
  release?(): void;
}

export interface JsonPathReader {
  /**
   * The values at the paths (null where a path leads nowhere: a missing member, an index past
   * the end, a step into a value of another kind), or undefined as for JsonLineReader. The
   * array is reused by the next call.
   */
  read(bytes: Uint8Array, from: number): Value[] | undefined;
  readonly next: number;
  /**
   * Tells that the lines of `bytes[start, end)` (each ended by "\n") are read next: the
   * scanner's reader (json_index_reader.ts) indexes them, this one ignores it.
   */
  prepare(bytes: Uint8Array, start: number, end: number): void;
  /**
   * The reader is done: what it holds may serve another (the indexed reader's scanner goes back
   * to the thread's pool). Nothing is read through it afterwards.
   */
  release?(): void;
}

/**
 * A reader of `names`, or null for names it cannot look for in bytes (non-ASCII, __proto__).
 * `pathReader` makes the path reader beneath (the scanner's indexed one: json_index_reader.ts).
 */
export function jsonLineReader(
  names: readonly string[],
  pathReader: (paths: readonly JsonPath[]) => JsonPathReader | null = jsonPathReader,
): JsonLineReader | null {
  const paths = pathReader(names.map((n) => [n]));
  if (paths === null) return null;
  // One object literal per row: all rows share one shape (see extractor.ts's rowBuilder).
  const build = generatedFunction<(v: Value[]) => Row>(
    ["v"],
    `return { ${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(", ")} };`,
  );
  const reader = {
    next: 0,
    prepare: (b: Uint8Array, start: number, end: number) => paths.prepare(b, start, end),
    release: () => paths.release?.(),
    read(b: Uint8Array, from: number): Row | undefined {
      const values = paths.read(b, from);
      if (values === undefined) return undefined;
      reader.next = paths.next;
      return build(values);
    },
  };
  return reader;
}

/** Member steps of a path tree: what to take from one object. */
interface Step {
  /** The key's bytes (ASCII). */
  readonly key: Uint8Array;
  /** The slots that take this member's whole value (paths named twice share it). */
  readonly slots: readonly number[];
  /** Deeper steps into this member's value. */
  readonly inner: Steps | null;
}

interface Element {
  readonly index: number;
  readonly slots: readonly number[];
  readonly inner: Steps | null;
}

export interface Steps {
  readonly members: readonly Step[];
  /**
   * By a key's length: the one member of that length, MANY_OF_LENGTH when several have it,
   * -1 when none does (most keys of a record: no byte of theirs is compared).
   */
  readonly byLength: Int16Array;
  /** Array elements by index, with the slots that take them and deeper steps. */
  readonly elements: readonly Element[];
}

/**
 * A reader of `paths`, or null for paths it cannot look for in bytes: an empty path, a member
 * name that is not printable ASCII or is `__proto__`, an index that is not a whole number.
 */
export function jsonPathReader(paths: readonly JsonPath[]): JsonPathReader | null {
  for (const p of paths) {
    if (p.length === 0 || typeof p[0] !== "string") return null;
    for (const step of p) {
      if (typeof step === "string") {
        if (step === "__proto__" || /[^\x20-\x7e]/.test(step)) return null;
      } else if (!Number.isSafeInteger(step) || step < 0) return null;
    }
  }
  const root = stepsOf(paths.map((p, slot) => ({ rest: p, slot })));
  const count = paths.length;
  const values: Value[] = paths.map(() => null);
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const shortStrings = new ShortStrings();
  // The bytes read four at a time, for the long runs of plain characters in strings.
  let wordsOf: Uint8Array | null = null;
  let words: Uint32Array | null = null;
  const stack = new Uint8Array(MAX_DEPTH);

  /** Past a string whose opening quote is at `i`; -1 when it breaks JSON's rules. */
  const skipString = (b: Uint8Array, i: number): number => {
    i++;
    for (;;) {
      if (words !== null) i = skipPlain(words, i);
      // Bytes the words did not cover (a partial word, bytes not aligned) one at a time.
      let c = b[i];
      while (c !== QUOTE && c !== BACKSLASH) {
        if (c === undefined || c < 0x20) return -1;
        c = b[++i];
      }
      if (c === QUOTE) return i + 1;
      // An escape, then plain bytes again.
      const e = b[i + 1];
      if (e === 0x75 /* u */) {
        if (!isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) {
          return -1;
        }
        i += 6;
      } else if (isEscape(e)) i += 2;
      else return -1;
    }
  };

  /**
   * Past any value at `i` (after white space), checked but not built; -1 when invalid. The
   * common case of no white space between tokens is tested first at every step.
   */
  const skipValue = (b: Uint8Array, i: number): number => {
    let depth = 0;
    for (;;) {
      // A value is expected at i.
      let c = b[i];
      if (c === 0x20 || c === 0x09 || c === 0x0d) c = b[i = skipSpace(b, i)];
      if (c === QUOTE) {
        i = skipString(b, i);
        if (i < 0) return -1;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (depth === MAX_DEPTH) return -1;
        const object = c === OPEN_OBJECT;
        stack[depth++] = c;
        i = skipSpace(b, i + 1);
        if (b[i] === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          i++;
          depth--;
        } else if (object) {
          i = skipKey(b, i);
          if (i < 0) return -1;
          continue;
        } else continue;
      } else {
        i = skipScalar(b, i);
        if (i < 0) return -1;
      }
      // After a value: close containers or go on to the next element.
      for (;;) {
        if (depth === 0) return i;
        c = b[i];
        if (c === 0x20 || c === 0x09 || c === 0x0d) c = b[i = skipSpace(b, i)];
        const open = stack[depth - 1];
        if (c === 0x2c /* , */) {
          if (open === OPEN_OBJECT) {
            i = skipKey(b, i + 1);
            if (i < 0) return -1;
          } else i++;
          break;
        } else if (c === (open === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          i++;
          depth--;
        } else return -1;
      }
    }
  };

  /** Past a member's key and its colon at `i` (after white space); -1 when invalid. */
  const skipKey = (b: Uint8Array, i: number): number => {
    if (b[i] !== QUOTE) {
      i = skipSpace(b, i);
      if (b[i] !== QUOTE) return -1;
    }
    i = skipString(b, i);
    if (i < 0) return -1;
    if (b[i] !== 0x3a /* : */) {
      i = skipSpace(b, i);
      if (b[i] !== 0x3a) return -1;
    }
    return i + 1;
  };

  /** Past a string, number or literal at `i`; -1 when it is none. */
  const skipScalar = (b: Uint8Array, i: number): number => {
    const c = b[i];
    if (c === QUOTE) return skipString(b, i);
    if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return skipNumber(b, i);
    if (c === 0x74) return b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65 ? i + 4 : -1;
    if (c === 0x66) {
      return b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65
        ? i + 5
        : -1;
    }
    if (c === 0x6e) return b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c ? i + 4 : -1;
    return -1;
  };

  /** The value at `i` (after white space) as JSON.parse makes it; sets `end` past it. */
  let end = 0;
  const readValue = (b: Uint8Array, i: number): Value | undefined => {
    i = skipSpace(b, i);
    const c = b[i];
    if (c === QUOTE) {
      const valueStart = i + 1;
      const stop = skipString(b, i);
      if (stop < 0) return undefined;
      end = stop;
      const short = shortStrings.get(b, valueStart, stop - 1);
      if (short !== undefined) return short;
      const text = decoder.decode(b.subarray(valueStart, stop - 1));
      // A backslash anywhere in the text means escapes: JSON.parse resolves them.
      return b.subarray(valueStart, stop - 1).includes(BACKSLASH)
        ? JSON.parse(`"${text}"`) as string
        : text;
    }
    if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
      const stop = skipNumber(b, i);
      if (stop < 0) return undefined;
      end = stop;
      return numberAt(b, i, stop);
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const stop = skipValue(b, i);
      if (stop < 0) return undefined;
      end = stop;
      return JSON.parse(decoder.decode(b.subarray(i, stop))) as Value;
    }
    const stop = skipScalar(b, i);
    if (stop < 0) return undefined;
    end = stop;
    return c === 0x74 ? true : c === 0x66 ? false : null;
  };

  /**
   * Takes what `steps` asks of the value at `i` into `values`; returns the offset past the
   * value, or -1 when the line is not one this reader takes. Slots of steps that lead nowhere
   * were set to null before.
   */
  const take = (b: Uint8Array, i: number, steps: Steps, depth: number): number => {
    i = skipSpace(b, i);
    const c = b[i];
    if (c === OPEN_OBJECT && steps.members.length > 0) return takeMembers(b, i, steps, depth);
    if (c === OPEN_ARRAY && steps.elements.length > 0) return takeElements(b, i, steps, depth);
    return skipValue(b, i);
  };

  const takeOne = (
    b: Uint8Array,
    i: number,
    slots: readonly number[],
    inner: Steps | null,
    depth: number,
  ) => {
    if (slots.length > 0) {
      const v = readValue(b, i);
      if (v === undefined) return -1;
      for (const slot of slots) values[slot] = v;
      if (inner === null) return end;
    }
    if (inner !== null) {
      if (depth >= MAX_DEPTH) return -1;
      clearSlots(inner, values);
      return take(b, i, inner, depth + 1);
    }
    return skipValue(b, i);
  };

  const takeMembers = (b: Uint8Array, i: number, steps: Steps, depth: number): number => {
    const members = steps.members;
    const byLength = steps.byLength;
    const n = members.length;
    i = skipSpace(b, i + 1);
    if (b[i] === CLOSE_OBJECT) return i + 1;
    for (;;) {
      // The key: no backslash, so that its bytes are its text.
      if (b[i] !== QUOTE) return -1;
      const keyStart = ++i;
      if (words !== null) i = skipPlain(words, i);
      let c = b[i];
      while (c !== QUOTE) {
        if (c === undefined || c < 0x20 || c === BACKSLASH) return -1;
        c = b[++i];
      }
      const keyEnd = i;
      if (b[++i] !== 0x3a /* : */) {
        i = skipSpace(b, i);
        if (b[i] !== 0x3a) return -1;
      }
      i++;
      // The lookup by length is written out here and in json_index_reader.ts, not shared: this
      // loop is past V8's inlining budget, and a call per key measured 5-8% slower here
      // (bench/scanner_bench.ts).
      const length = keyEnd - keyStart;
      let found = length < byLength.length ? byLength[length]! : -1;
      if (found === MANY_OF_LENGTH) {
        found = -1;
        for (let k = 0; k < n; k++) {
          const key = members[k]!.key;
          if (key.length === length && sameKey(b, keyStart, key)) {
            found = k;
            break;
          }
        }
      } else if (found >= 0 && !sameKey(b, keyStart, members[found]!.key)) found = -1;
      if (found < 0) {
        // Most values skipped are strings: straight to the string's end.
        i = b[i] === QUOTE ? skipString(b, i) : skipValue(b, i);
      } else {
        // A repeated key: its last value counts, so what an earlier one gave is undone.
        const m = members[found]!;
        i = takeOne(b, i, m.slots, m.inner, depth);
      }
      if (i < 0) return -1;
      c = b[i];
      if (c === 0x2c /* , */ && b[i + 1] === QUOTE) {
        i++;
        continue;
      }
      i = skipSpace(b, i);
      c = b[i];
      if (c === 0x2c /* , */) {
        i = skipSpace(b, i + 1);
        continue;
      }
      return c === CLOSE_OBJECT ? i + 1 : -1;
    }
  };

  const takeElements = (b: Uint8Array, i: number, steps: Steps, depth: number): number => {
    const elements = steps.elements;
    i = skipSpace(b, i + 1);
    if (b[i] === CLOSE_ARRAY) return i + 1;
    for (let index = 0;; index++) {
      let e = -1;
      for (let k = 0; k < elements.length; k++) {
        if (elements[k]!.index === index) {
          e = k;
          break;
        }
      }
      i = e < 0 ? skipValue(b, i) : takeOne(b, i, elements[e]!.slots, elements[e]!.inner, depth);
      if (i < 0) return -1;
      i = skipSpace(b, i);
      const c = b[i];
      if (c === 0x2c /* , */) {
        i++;
        continue;
      }
      return c === CLOSE_ARRAY ? i + 1 : -1;
    }
  };

  const reader = {
    next: 0,
    prepare(): void {},
    read(b: Uint8Array, from: number): Value[] | undefined {
      if (b !== wordsOf) {
        wordsOf = b;
        words = wordView(b);
      }
      for (let k = 0; k < count; k++) values[k] = null;
      let i = skipSpace(b, from);
      if (b[i] !== OPEN_OBJECT) return undefined;
      i = takeMembers(b, i, root, 0);
      if (i < 0) return undefined;
      i = skipSpace(b, i);
      if (b[i] !== NL) return undefined;
      reader.next = i + 1;
      return values;
    },
  };
  return reader;
}

/** The tree of steps of paths (each with the slot it fills), grouped by their first step. */
export function stepsOf(paths: readonly { rest: JsonPath; slot: number }[]): Steps {
  const members: Step[] = [];
  const elements: Element[] = [];
  const heads = new Map<string | number, { rest: JsonPath; slot: number }[]>();
  for (const p of paths) {
    const list = heads.get(p.rest[0]!) ?? [];
    list.push(p);
    heads.set(p.rest[0]!, list);
  }
  for (const [head, list] of heads) {
    const slots = list.filter((p) => p.rest.length === 1).map((p) => p.slot);
    const deeper = list.filter((p) => p.rest.length > 1).map((p) => ({
      rest: p.rest.slice(1),
      slot: p.slot,
    }));
    const inner = deeper.length > 0 ? stepsOf(deeper) : null;
    if (typeof head === "string") {
      members.push({ key: Uint8Array.from(head, (c) => c.charCodeAt(0)), slots, inner });
    } else elements.push({ index: head, slots, inner });
  }
  const byLength = new Int16Array(Math.max(0, ...members.map((m) => m.key.length)) + 1).fill(-1);
  members.forEach((m, k) => {
    byLength[m.key.length] = byLength[m.key.length] === -1 ? k : MANY_OF_LENGTH;
  });
  return { members, byLength, elements };
}

/** Sets to null the slots of `steps` and of all steps below (a repeated key's earlier value). */
export function clearSlots(steps: Steps, values: Value[]): void {
  for (const m of steps.members) {
    for (const slot of m.slots) values[slot] = null;
    if (m.inner !== null) clearSlots(m.inner, values);
  }
  for (const e of steps.elements) {
    for (const slot of e.slots) values[slot] = null;
    if (e.inner !== null) clearSlots(e.inner, values);
  }
}

/** Past a number at `i` (JSON's grammar exactly); -1 when it is none. */
export function skipNumber(b: Uint8Array, i: number): number {
  // A byte past the end reads as -1, which none of the tests below matches.
  let c = b[i] ?? -1;
  if (c === 0x2d) c = b[++i] ?? -1;
  if (c === 0x30) c = b[++i] ?? -1;
  else if (c >= 0x31 && c <= 0x39) {
    while (c >= 0x30 && c <= 0x39) c = b[++i] ?? -1;
  } else return -1;
  if (c === 0x2e /* . */) {
    c = b[++i] ?? -1;
    if (!(c >= 0x30 && c <= 0x39)) return -1;
    while (c >= 0x30 && c <= 0x39) c = b[++i] ?? -1;
  }
  if (c === 0x65 || c === 0x45 /* e E */) {
    c = b[++i] ?? -1;
    if (c === 0x2b || c === 0x2d) c = b[++i] ?? -1;
    if (!(c >= 0x30 && c <= 0x39)) return -1;
    while (c >= 0x30 && c <= 0x39) c = b[++i] ?? -1;
  }
  return i;
}

/** The number whose valid text is `b[start, stop)`. */
export function numberAt(b: Uint8Array, start: number, stop: number): number {
  const negative = b[start] === 0x2d;
  let i = negative ? start + 1 : start;
  // Up to 15 digits an integer is exact in a double; others take Number's rounding.
  if (stop - i <= 15) {
    let n = 0;
    for (; i < stop; i++) {
      const c = b[i]!;
      if (c < 0x30 || c > 0x39) return Number(String.fromCharCode(...b.subarray(start, stop)));
      n = n * 10 + (c - 0x30);
    }
    return negative ? -n : n;
  }
  return Number(String.fromCharCode(...b.subarray(start, stop)));
}

/** The bytes of `b` as 32-bit words (whole words only), or null when `b` is not aligned. */
export function wordView(b: Uint8Array): Uint32Array | null {
  return (b.byteOffset & 3) === 0 ? new Uint32Array(b.buffer, b.byteOffset, b.length >> 2) : null;
}

/**
 * Past the plain bytes from `i` on (neither a quote, a backslash nor below 0x20), a word at a
 * time where the bytes are aligned: the offset of the first other byte, or of the last partial
 * word, which the byte loop then looks at. A word holds such a byte exactly when one of two
 * tests sets a high bit: a zero byte after XOR with the backslash, or a byte below 0x21 after
 * XOR with 0x02, which maps the quote to 0x20 and the bytes below 0x20 among themselves, and
 * every other byte to 0x21 or above (`(x - n) & ~x` per byte, n <= 0x80: set for some byte
 * exactly when one is below n; a byte above is flagged wrongly only by the borrow of one below
 * it that is flagged rightly, so the lowest flag is exact).
 */
function skipPlain(words: Uint32Array, i: number): number {
  let w = i >> 2;
  const n = words.length;
  if (w >= n) return i;
  // The bytes of the first word before `i` are made plain ("A") for the test.
  const before = (1 << ((i & 3) << 3)) - 1;
  let v = (words[w]! & ~before) | (0x41414141 & before);
  for (;;) {
    const q = v ^ 0x02020202;
    const s = v ^ 0x5c5c5c5c;
    const m = (((q - 0x21212121) & ~q) | ((s - 0x01010101) & ~s)) & 0x80808080;
    // The lowest flag is exact: a borrow can flag a byte only above one that is flagged.
    if (m !== 0) return (w << 2) + ((31 - Math.clz32(m & -m)) >> 3);
    if (++w === n) return w << 2;
    v = words[w]!;
  }
}

/** Past JSON white space within a line ("\n" ends the line instead). */
export function skipSpace(b: Uint8Array, i: number): number {
  let c = b[i];
  while (c === 0x20 || c === 0x09 || c === 0x0d) c = b[++i];
  return i;
}

/** Whether the bytes at `start` are those of `key` (the caller compared the lengths). */
export function sameKey(b: Uint8Array, start: number, key: Uint8Array): boolean {
  for (let j = 0; j < key.length; j++) if (b[start + j] !== key[j]) return false;
  return true;
}

function isHex(c: number | undefined): boolean {
  if (c === undefined) return false;
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** The characters after a backslash that JSON allows, besides `u`. */
function isEscape(c: number | undefined): boolean {
  return c === QUOTE || c === BACKSLASH || c === 0x2f || c === 0x62 || c === 0x66 ||
    c === 0x6e || c === 0x72 || c === 0x74;
}
