/**
 * The JSON path reader on the SIMD scanner's structural index (engine/simd/): the same values
 * as json_line_reader.ts's `jsonPathReader`, which stays the reference, found by walking the
 * index from token to token instead of reading every byte. Each piece of lines is indexed once
 * (`prepare`: quotes, `{}[]:,` outside strings, backslashes, and the bytes that make a line
 * invalid inside strings); a string is then stepped over in one jump from its opening quote to
 * its closing one, an object or array nobody reads by its tokens alone. Only the bytes between
 * two tokens are looked at (white space, numbers, literals: checked as JSON's grammar says), and
 * the values read are decoded as the reference decodes them.
 *
 *   const reader = indexedPathReader([["status"], ["location", "city"]])!;
 *   reader.prepare(bytes, start, end);     // once per piece of whole lines
 *   const values = reader.read(bytes, at); // as jsonPathReader's read; reader.next after
 *
 * Exactness: a line the index marks invalid (a control byte or a bad escape in a string, a
 * backslash outside one), a line whose walk fails (bad grammar, nesting past MAX_DEPTH, a
 * backslash in a key on the way), and any read outside the piece indexed go to the reference
 * reader, which decides; the walk takes a line only when the reference would take it too, with
 * the same values (json_index_reader_test.ts holds the two against each other).
 */

import type { Value } from "../values/values.ts";
import { ShortStrings } from "../values/short_strings.ts";
import { END, type JsonIndex, scannerPath, SimdScanner } from "../simd/scanner.ts";
import {
  type JsonPath,
  type JsonPathReader,
  jsonPathReader,
  MANY_OF_LENGTH,
  MAX_DEPTH,
  numberAt,
  sameKey,
  skipNumber,
  skipSpace,
  type Steps,
  stepsOf,
} from "./json_line_reader.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NL = 0x0a;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * The path reader the scanner path chooses (`scannerPath()`): the indexed one, or the reference
 * `jsonPathReader` (TRAWL_SCANNER=js). Null for paths neither can look for in bytes.
 */
export function scanPathReader(paths: readonly JsonPath[]): JsonPathReader | null {
  return scannerPath() === "wasm" ? indexedPathReader(paths) : jsonPathReader(paths);
}

/** A path reader that counts the lines its index walk took (the others went to the reference). */
export interface IndexedPathReader extends JsonPathReader {
  readonly taken: number;
}

/** A reader of `paths` on the index, or null where jsonPathReader gives null. */
export function indexedPathReader(paths: readonly JsonPath[]): IndexedPathReader | null {
  const reference = jsonPathReader(paths);
  if (reference === null) return null;
  const root = stepsOf(paths.map((p, slot) => ({ rest: p, slot })));
  const count = paths.length;
  const values: Value[] = paths.map(() => null);
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const shortStrings = new ShortStrings();
  const scanner = new SimdScanner();
  const stack = new Uint8Array(MAX_DEPTH);
  const none = new Uint32Array([END, END, END, END]);

  // The piece indexed, and the cursors of its lists (each at the first entry not passed yet).
  let indexed: Uint8Array | null = null;
  let from0 = 0;
  let end0 = 0;
  let tok: Uint32Array = none;
  let bs: Uint32Array = none;
  let er: Uint32Array = none;
  let t = 0;
  let bc = 0;
  let ec = 0;
  /** The start of the line of er[ec] (-1: not found yet). */
  let errorLine = -1;

  const delegate = (b: Uint8Array, from: number): Value[] | undefined => {
    const v = reference.read(b, from);
    if (v !== undefined) reader.next = reference.next;
    return v;
  };

  /** Whether b[from, to) is JSON white space (no line end). */
  const blank = (b: Uint8Array, from: number, to: number): boolean => {
    for (; from < to; from++) {
      const c = b[from];
      if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
    }
    return true;
  };

  /** Past a number or literal at `i`; -1 when there is none. */
  const skipScalar = (b: Uint8Array, i: number): number => {
    const c = b[i];
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

  /**
   * Past a key and its colon, the key's quote being the next token (after white space from
   * `i`); -1 when invalid.
   */
  const skipKey = (b: Uint8Array, i: number): number => {
    const p = tok[t]!;
    if (b[p] !== QUOTE || !blank(b, i, p)) return -1;
    const q = tok[++t]!;
    if (b[q] !== QUOTE) return -1;
    const colon = tok[++t]!;
    if (b[colon] !== COLON || !blank(b, q + 1, colon)) return -1;
    t++;
    return colon + 1;
  };

  /** Past any value from `i` (after white space), by its tokens; -1 when invalid. */
  const skipValue = (b: Uint8Array, i: number): number => {
    let depth = 0;
    for (;;) {
      // A value is expected from i: at the next token (a string, an object, an array), or a
      // scalar before it.
      let p = tok[t]!;
      let c = b[i];
      if (c === 0x20 || c === 0x09 || c === 0x0d) c = b[i = skipSpace(b, i)];
      if (i === p) {
        if (c === QUOTE) {
          const q = tok[++t]!;
          if (b[q] !== QUOTE) return -1;
          t++;
          i = q + 1;
        } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
          if (depth === MAX_DEPTH) return -1;
          stack[depth++] = c;
          const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
          const q = tok[++t]!;
          if (b[q] === close && blank(b, p + 1, q)) {
            t++;
            i = q + 1;
            depth--;
          } else if (c === OPEN_OBJECT) {
            i = skipKey(b, p + 1);
            if (i < 0) return -1;
            continue;
          } else {
            i = p + 1;
            continue;
          }
        } else return -1;
      } else {
        i = skipScalar(b, i);
        if (i < 0) return -1;
      }
      // After a value: close containers or go on to the next element.
      for (;;) {
        if (depth === 0) return i;
        p = tok[t]!;
        if (!blank(b, i, p)) return -1;
        c = b[p];
        const open = stack[depth - 1];
        if (c === COMMA) {
          t++;
          if (open === OPEN_OBJECT) {
            i = skipKey(b, p + 1);
            if (i < 0) return -1;
          } else i = p + 1;
          break;
        } else if (c === (open === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          t++;
          i = p + 1;
          depth--;
        } else return -1;
      }
    }
  };

  /** The value from `i` (after white space) as JSON.parse makes it; sets `end` past it. */
  let end = 0;
  const readValue = (b: Uint8Array, i: number): Value | undefined => {
    i = skipSpace(b, i);
    const c = b[i];
    if (c === QUOTE) {
      if (tok[t] !== i) return undefined;
      const q = tok[++t]!;
      if (b[q] !== QUOTE) return undefined;
      t++;
      end = q + 1;
      const short = shortStrings.get(b, i + 1, q);
      if (short !== undefined) return short;
      const text = decoder.decode(b.subarray(i + 1, q));
      while (bs[bc]! <= i) bc++;
      // A backslash means escapes (valid ones: the line has no error): JSON.parse resolves them.
      return bs[bc]! < q ? JSON.parse(`"${text}"`) as string : text;
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

  const take = (b: Uint8Array, i: number, steps: Steps, depth: number): number => {
    i = skipSpace(b, i);
    const c = b[i];
    if (c === OPEN_OBJECT && steps.members.length > 0) {
      return tok[t] === i ? takeMembers(b, i, steps, depth) : -1;
    }
    if (c === OPEN_ARRAY && steps.elements.length > 0) {
      return tok[t] === i ? takeElements(b, i, steps, depth) : -1;
    }
    return skipValue(b, i);
  };

  const takeOne = (
    b: Uint8Array,
    i: number,
    slots: readonly number[],
    inner: Steps | null,
    depth: number,
  ): number => {
    if (slots.length > 0) {
      const t0 = t;
      const bc0 = bc;
      const v = readValue(b, i);
      if (v === undefined) return -1;
      for (const slot of slots) values[slot] = v;
      if (inner === null) return end;
      // The same value walked again for the deeper steps.
      t = t0;
      bc = bc0;
    }
    if (inner !== null) {
      if (depth >= MAX_DEPTH) return -1;
      clear(inner);
      return take(b, i, inner, depth + 1);
    }
    return skipValue(b, i);
  };

  const clear = (steps: Steps): void => {
    for (const m of steps.members) {
      for (const slot of m.slots) values[slot] = null;
      if (m.inner !== null) clear(m.inner);
    }
    for (const e of steps.elements) {
      for (const slot of e.slots) values[slot] = null;
      if (e.inner !== null) clear(e.inner);
    }
  };

  /** The members of the object whose `{` is at `i` (the token at the cursor). */
  const takeMembers = (b: Uint8Array, i: number, steps: Steps, depth: number): number => {
    const members = steps.members;
    const byLength = steps.byLength;
    const n = members.length;
    let p = tok[++t]!;
    if (!blank(b, i + 1, p)) return -1;
    let c = b[p];
    if (c === CLOSE_OBJECT) {
      t++;
      return p + 1;
    }
    for (;;) {
      if (c !== QUOTE) return -1;
      const keyStart = p + 1;
      const keyEnd = tok[++t]!;
      if (b[keyEnd] !== QUOTE) return -1;
      // A key with a backslash (escapes) is left to the reference, as it leaves it.
      while (bs[bc]! < keyStart) bc++;
      if (bs[bc]! < keyEnd) return -1;
      const colon = tok[++t]!;
      if (b[colon] !== COLON || !blank(b, keyEnd + 1, colon)) return -1;
      t++;
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
      if (found < 0) i = skipValue(b, colon + 1);
      else {
        const m = members[found]!;
        i = takeOne(b, colon + 1, m.slots, m.inner, depth);
      }
      if (i < 0) return -1;
      p = tok[t]!;
      if (!blank(b, i, p)) return -1;
      c = b[p];
      if (c === COMMA) {
        const comma = p;
        p = tok[++t]!;
        if (!blank(b, comma + 1, p)) return -1;
        c = b[p];
        continue;
      }
      if (c !== CLOSE_OBJECT) return -1;
      t++;
      return p + 1;
    }
  };

  /** The elements of the array whose `[` is at `i` (the token at the cursor). */
  const takeElements = (b: Uint8Array, i: number, steps: Steps, depth: number): number => {
    const elements = steps.elements;
    t++;
    const q = tok[t]!;
    if (b[q] === CLOSE_ARRAY && blank(b, i + 1, q)) {
      t++;
      return q + 1;
    }
    i++;
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
      const p = tok[t]!;
      if (!blank(b, i, p)) return -1;
      const c = b[p];
      if (c === COMMA) {
        t++;
        i = p + 1;
        continue;
      }
      if (c !== CLOSE_ARRAY) return -1;
      t++;
      return p + 1;
    }
  };

  const use = (index: JsonIndex | null, b: Uint8Array, start: number, stop: number) => {
    indexed = index === null ? null : b;
    from0 = start;
    end0 = stop;
    tok = index?.tokens ?? none;
    bs = index?.backslashes ?? none;
    er = index?.errors ?? none;
    t = bc = ec = 0;
    errorLine = -1;
  };

  const reader = {
    next: 0,
    taken: 0,
    prepare(b: Uint8Array, start: number, stop: number): void {
      use(start < stop ? scanner.indexJson(b, start, stop) : null, b, start, stop);
    },
    read(b: Uint8Array, from: number): Value[] | undefined {
      if (b !== indexed || from < from0 || from >= end0) return delegate(b, from);
      // The cursors move to this line (lines are read in order; a line left to the reference
      // moved none of them).
      while (tok[t]! < from) t++;
      if (er[ec]! < from) {
        while (er[ec]! < from) ec++;
        errorLine = -1;
      }
      if (er[ec] !== END) {
        if (errorLine < 0) errorLine = b.lastIndexOf(NL, er[ec]! - 1) + 1;
        // The line holds an error the index found: the reference decides.
        if (errorLine <= from) return delegate(b, from);
      }
      for (let k = 0; k < count; k++) values[k] = null;
      let i = skipSpace(b, from);
      if (b[i] !== OPEN_OBJECT || tok[t] !== i) return delegate(b, from);
      i = takeMembers(b, i, root, 0);
      if (i < 0) return delegate(b, from);
      i = skipSpace(b, i);
      if (b[i] !== NL) return delegate(b, from);
      reader.next = i + 1;
      reader.taken++;
      return values;
    },
  };
  return reader;
}
