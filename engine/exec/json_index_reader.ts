/**
 * The JSON path reader on the SIMD scanner's index (engine/simd/): the same values as
 * json_line_reader.ts's `jsonPathReader`, which stays the reference, found by jumping from member
 * to member. Each piece of lines is indexed once (`prepare`): stage 1 gives the tokens (quotes,
 * `{}[]:,` outside strings) and the backslashes, stage 2 checks each line against JSON's grammar
 * and gives, for every `{` and `[`, its closing token. On a line stage 2 found valid the reader
 * trusts the tokens: a key is its two quote tokens and a colon, a value nobody reads one step (a
 * scalar: none, a string: two tokens, an object or array: to its closing token); only the values
 * read are decoded, as the reference decodes them.
 *
 *   const reader = indexedPathReader([["status"], ["location", "city"]])!;
 *   reader.prepare(bytes, start, end);     // once per piece of whole lines
 *   const values = reader.read(bytes, at); // as jsonPathReader's read; reader.next after
 *
 * Exactness: a line stage 2 did not find valid (invalid JSON, not an object, nested deeper than
 * 96, a control byte or a bad escape in a string), a line with a backslash in a key on the way
 * (the reference leaves those to JSON.parse), and any read outside the piece indexed go to the
 * reference reader, which decides (json_index_reader_test.ts holds the two against each other).
 */

import type { Value } from "../values/values.ts";
import { ShortStrings } from "../values/short_strings.ts";
import {
  END,
  giveScanner,
  type KeyMember,
  type KeyTree,
  scannerPath,
  type SimdScanner,
  takeScanner,
} from "../simd/scanner.ts";
import {
  clearSlots,
  type JsonPath,
  type JsonPathReader,
  jsonPathReader,
  MANY_OF_LENGTH,
  numberAt,
  sameKey,
  skipNumber,
  skipSpace,
  type Steps,
  stepsOf,
} from "./json_line_reader.ts";

const QUOTE = 0x22;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * The path reader the scanner path chooses (`scannerPath("json")`): the indexed one (the default),
 * or the reference `jsonPathReader` (TRAWL_SCANNER=js, or no WebAssembly SIMD). Null for paths
 * neither can look for in bytes.
 */
export function scanPathReader(paths: readonly JsonPath[]): JsonPathReader | null {
  return scannerPath("json") === "wasm" ? indexedPathReader(paths) : jsonPathReader(paths);
}

/** A path reader that counts the lines its index walk took (the others went to the reference). */
export interface IndexedPathReader extends JsonPathReader {
  readonly taken: number;
}

/** A reader of `paths` on the index, or null where jsonPathReader gives null. */
export function indexedPathReader(paths: readonly JsonPath[]): IndexedPathReader | null {
  const reference = jsonPathReader(paths);
  if (reference === null) return null;
  // Paths deeper than lines the scanner validates (96 levels) are never walked on the index.
  if (paths.some((p) => p.length > 90)) return Object.assign(reference, { taken: 0 });
  const root = stepsOf(paths.map((p, slot) => ({ rest: p, slot })));
  const count = paths.length;
  const values: Value[] = paths.map(() => null);
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const shortStrings = new ShortStrings();
  // From the thread's pool, given back by `release` (a reader per block of a cached scan).
  let scanner: SimdScanner | null = takeScanner();
  const none = new Uint32Array([END, END, END, END]);
  // Paths of members only (`status`, `status.errorCode`; no index, no member both read whole
  // and gone into): stage 2 finds their values itself (`slots`), and a line is read without a
  // walk of its members. `leafSlots[leaf]`: the slots a leaf's value fills.
  const leafSlots: (readonly number[])[] = [];
  const keys = keyTreeOf(root, leafSlots);
  const stride = 1 + 2 * leafSlots.length;

  // The piece indexed, and the cursors of its lists (each at the first entry not passed yet).
  let indexed: Uint8Array | null = null;
  let from0 = 0;
  let end0 = 0;
  let tok: Uint32Array = none;
  let jumps: Uint32Array = none;
  let bs: Uint32Array = none;
  let valid: Uint32Array = none;
  let slots: Uint32Array | null = null;
  let t = 0;
  let bc = 0;
  let vc = 0;

  const delegate = (b: Uint8Array, from: number): Value[] | undefined => {
    const v = reference.read(b, from);
    if (v !== undefined) reader.next = reference.next;
    return v;
  };

  /** Past the value at the token cursor or the scalar before it (`i`: where the value may start). */
  const skipAt = (b: Uint8Array, i: number): void => {
    const j = skipSpace(b, i);
    if (tok[t] !== j) return; // a number or a literal: the next token follows it
    const c = b[j];
    if (c === QUOTE) t += 2;
    else t = jumps[t]! + 1; // an object or an array: past its closing token
  };

  /** The value at `i` (after white space) as JSON.parse makes it; the cursor moves past it. */
  const readValue = (b: Uint8Array, i: number): Value => {
    i = skipSpace(b, i);
    const c = b[i];
    if (c === QUOTE) {
      const q = tok[t + 1]!;
      t += 2;
      const short = shortStrings.get(b, i + 1, q);
      if (short !== undefined) return short;
      const text = decoder.decode(b.subarray(i + 1, q));
      while (bs[bc]! <= i) bc++;
      // A backslash means escapes (valid ones: the line is valid): JSON.parse resolves them.
      return bs[bc]! < q ? JSON.parse(`"${text}"`) as string : text;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const close = jumps[t]!;
      const stop = tok[close]! + 1;
      t = close + 1;
      return JSON.parse(decoder.decode(b.subarray(i, stop))) as Value;
    }
    if (c === 0x74) return true;
    if (c === 0x66) return false;
    if (c === 0x6e) return null;
    return numberAt(b, i, skipNumber(b, i));
  };

  /** Takes what `steps` asks of the value at `i`; false for a key with escapes on the way. */
  const take = (b: Uint8Array, i: number, steps: Steps): boolean => {
    const j = skipSpace(b, i);
    const c = b[j];
    if (c === OPEN_OBJECT && steps.members.length > 0) return takeMembers(b, steps);
    if (c === OPEN_ARRAY && steps.elements.length > 0) return takeElements(b, steps);
    skipAt(b, i);
    return true;
  };

  const takeOne = (
    b: Uint8Array,
    i: number,
    slots: readonly number[],
    inner: Steps | null,
  ): boolean => {
    if (slots.length > 0) {
      const t0 = t;
      const bc0 = bc;
      const v = readValue(b, i);
      for (const slot of slots) values[slot] = v;
      if (inner === null) return true;
      // The same value walked again for the deeper steps.
      t = t0;
      bc = bc0;
    }
    if (inner !== null) {
      clearSlots(inner, values);
      return take(b, i, inner);
    }
    skipAt(b, i);
    return true;
  };

  /**
   * The members of the object whose `{` is the token at the cursor, member to member: a key is
   * its two quote tokens and a colon; a value nobody reads is one token step (a scalar: none,
   * a string: two, an object or array: to its closing token).
   */
  const takeMembers = (b: Uint8Array, steps: Steps): boolean => {
    const members = steps.members;
    const byLength = steps.byLength;
    const n = members.length;
    let p = tok[++t]!;
    if (b[p] === CLOSE_OBJECT) {
      t++;
      return true;
    }
    for (;;) {
      const keyStart = p + 1;
      const keyEnd = tok[t + 1]!;
      const colon = tok[t + 2]!;
      t += 3;
      // A key with a backslash (escapes) is left to the reference, as it leaves it.
      while (bs[bc]! < keyStart) bc++;
      if (bs[bc]! < keyEnd) return false;
      // As json_line_reader.ts's lookup (written out there for speed).
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
        // The token after the colon: the value's own, or the , or } after a scalar.
        const c = b[tok[t]!];
        if (c === QUOTE) t += 2;
        else if (c === OPEN_OBJECT || c === OPEN_ARRAY) t = jumps[t]! + 1;
      } else {
        const m = members[found]!;
        if (!takeOne(b, colon + 1, m.slots, m.inner)) return false;
      }
      // A , or the closing }.
      p = tok[t++]!;
      if (b[p] === CLOSE_OBJECT) return true;
      p = tok[t]!;
    }
  };

  /** The elements of the array whose `[` is the token at the cursor. */
  const takeElements = (b: Uint8Array, steps: Steps): boolean => {
    const elements = steps.elements;
    const open = tok[t++]!;
    const first = tok[t]!;
    if (b[first] === CLOSE_ARRAY && skipSpace(b, open + 1) === first) {
      t++;
      return true;
    }
    let i = open + 1;
    for (let index = 0;; index++) {
      let e = -1;
      for (let k = 0; k < elements.length; k++) {
        if (elements[k]!.index === index) {
          e = k;
          break;
        }
      }
      if (e < 0) skipAt(b, i);
      else if (!takeOne(b, i, elements[e]!.slots, elements[e]!.inner)) return false;
      // A , or the closing ].
      const p = tok[t++]!;
      if (b[p] === CLOSE_ARRAY) return true;
      i = p + 1;
    }
  };

  const reader = {
    next: 0,
    taken: 0,
    prepare(b: Uint8Array, start: number, stop: number): void {
      scanner ??= takeScanner();
      const index = start < stop ? scanner.indexJson(b, start, stop, true, keys) : null;
      indexed = index === null ? null : b;
      from0 = start;
      end0 = stop;
      tok = index?.tokens ?? none;
      jumps = index?.jumps ?? none;
      bs = index?.backslashes ?? none;
      valid = index?.valid ?? none;
      slots = index?.slots ?? null;
      t = bc = vc = 0;
    },
    read(b: Uint8Array, from: number): Value[] | undefined {
      if (b !== indexed || from < from0 || from >= end0) return delegate(b, from);
      // Only a line the scanner found valid is walked; lines are read in order.
      while (valid[vc]! < from) vc++;
      if (valid[vc] !== from) return delegate(b, from);
      const line = vc++;
      for (let k = 0; k < count; k++) values[k] = null;
      if (slots !== null) {
        const rec = line * stride;
        t = slots[rec]!; // the root's {
        const close = jumps[t]!;
        const closeAt = tok[close]!;
        while (bs[bc]! < from) bc++;
        // No backslash in the line, so none in a key: the values stage 2 found are the walk's.
        if (bs[bc]! > closeAt) {
          for (let k = 0; k < leafSlots.length; k++) {
            const at = slots[rec + 1 + 2 * k]!;
            if (at === END) continue;
            t = slots[rec + 2 + 2 * k]!;
            const v = readValue(b, at);
            for (const slot of leafSlots[k]!) values[slot] = v;
          }
          t = close + 1;
          reader.next = skipSpace(b, closeAt + 1) + 1;
          reader.taken++;
          return values;
        }
      } else while (tok[t]! < from) t++;
      if (!takeMembers(b, root)) return delegate(b, from);
      // Past the root's }: white space and the line's end.
      reader.next = skipSpace(b, tok[t - 1]! + 1) + 1;
      reader.taken++;
      return values;
    },
    release(): void {
      if (scanner === null) return;
      giveScanner(scanner);
      scanner = null;
      // The index was a view of the scanner's memory: the next line goes to the reference.
      indexed = null;
    },
  };
  return reader;
}

/**
 * The tree of `root`'s member steps for stage 2 (scanner.ts's KeyTree), its leaves' slots
 * pushed to `leafSlots` in leaf order; null when a step is an index or a member is both read
 * whole and gone into (those lines are walked).
 */
function keyTreeOf(root: Steps, leafSlots: (readonly number[])[]): KeyTree | null {
  const members = (steps: Steps): KeyMember[] | null => {
    if (steps.elements.length > 0) return null;
    const out: KeyMember[] = [];
    for (const m of steps.members) {
      if (m.slots.length > 0 && m.inner !== null) return null;
      if (m.inner === null) {
        out.push({ key: m.key, leaf: leafSlots.length, inner: null, lo: 0, hi: 0 });
        leafSlots.push(m.slots);
        continue;
      }
      const lo = leafSlots.length;
      const inner = members(m.inner);
      if (inner === null) return null;
      out.push({ key: m.key, leaf: -1, inner, lo, hi: leafSlots.length });
    }
    return out;
  };
  const tree = members(root);
  if (tree === null) {
    leafSlots.length = 0;
    return null;
  }
  return { root: tree, leaves: leafSlots.length };
}
