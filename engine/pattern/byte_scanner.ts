/**
 * A PARSE pattern compiled into a scanner over the UTF-8 bytes of lines, for the common shape
 * of log patterns: literals and the matchers INT, LONG, WORD, NSPACE, DQS, IPV4, IPADDR and
 * HTTPDATE in a plain sequence (no choice, no EOL). It walks a line with comparisons of bytes
 * instead of running the regular expression, decodes only the fields a query reads, and
 * computes numbers and IPv4 addresses from the digits.
 *
 * It never decides alone that a line does not match: it follows the expression's own first
 * choices (greedy runs, alternatives in order), and whenever that path fails, or a line holds
 * something it does not model (non-ASCII bytes where the expression tests for white space, an
 * IPv6 address, ...), it answers `undefined` and the caller runs the regular expression on that
 * line, which decides. A line it accepts is one the expression matches with the same captures,
 * because a backtracking matcher returns the first success in the order of its choices, and
 * the scanner takes the first choice at every step.
 *
 *   const scanner = makeByteScanner(elements, ["status"], "UTC");
 *   scanner?.scan(bytes, at); // a row, or undefined: run the RegExp on this line
 *
 * Lines must end with "\n" (the caller gives the expression a last line without one).
 */

import type { Row, Value } from "../values/values.ts";
import { IpAddr, Timestamp } from "../values/values.ts";
import { httpDateBytesMs } from "../values/time_parse.ts";
import type { MatcherName, PatternElement } from "./pattern_ast.ts";
import type { PushedFilter } from "../plan/plan.ts";
import { type Converter, identity, matcherSpec } from "./matchers.ts";
import { noFileClock } from "./year_inference.ts";
import { type DirectGroups, SMALL_INTS } from "../plan/context.ts";
import { generatedFunction } from "../values/generated_code.ts";
import { bytesText, ShortStrings } from "../values/short_strings.ts";
import type { ColumnVectors } from "../render/render_bytes.ts";

export interface ByteScanner {
  /**
   * The row of the line starting at `from` (ended by "\n"), null for a record the filter
   * drops or one folded into the scanner's `direct` grouping, or undefined when the regular
   * expression must decide. After a row or null, `next` is the offset just past the line's "\n".
   * `lineEnd`, when the caller knows it (the SIMD line search), is the offset of that "\n": the
   * rest of the line after the pattern is then not stepped over byte by byte.
   */
  scan(bytes: Uint8Array, from: number, lineEnd?: number): Row | null | undefined;
  readonly next: number;
  /**
   * Whether it folds records into the `direct` grouping it was made with; the rows it gives
   * (of groups that grouping does not have yet, or values it could not fold) are then for the
   * grouping's `add`, at once, and so are those of the lines left to the expression.
   */
  readonly folds: boolean;
  /** Reads the `direct` grouping's arrays again: call it after each of its `add`s. */
  refresh(): void;
}

const EMPTY = new Uint8Array(0);
const encoder = new TextEncoder();

/**
 * Where a scanner made with it puts its records, column by column: the column cache's fill
 * (engine/exec/cached_scan.ts); READ_JSON's fill uses it too (read_json_source.ts, `putValues`).
 * Every record the scanner reads goes to the sink, and it makes no row (it answers null): the
 * filter and the grouping are then run on the block's columns, as when it is read from the
 * cache. Storing the values and folding them in the same loop cost about 15% more CPU than a
 * scan without the cache; folded from the columns, about 3% (docs/architecture.md, the column
 * cache).
 *
 * A field the scanner gives as a number (INT, LONG), an IPv4 address or a timestamp (HTTPDATE)
 * has its values written straight into a typed vector (`vecs[k]`: numbers and timestamps'
 * milliseconds (`ts[k]`) in a Float64Array, IPv4 addresses as their bits in a Uint32Array;
 * `tags[k]`: 1 null, 2 absent), which the block encodes without a pass over values
 * (engine/fs/column_block.ts's encodeColumns); a value such a vector cannot hold (a LONG of more
 * than 15 digits, an IPv6 address from the expression) turns that field's values into a list
 * (`cols[k]`, as for the fields of text a converter reads, DQS's). A field of plain text keeps its
 * bytes (`span`). `n` records are in the sink.
 */
export class ColumnSink {
  n = 0;
  /** Records the vectors have room for. */
  cap = 0;
  /** Per field: its values by record, where it has no vector (undefined where absent). */
  readonly cols: unknown[][];
  /** Per field: whether its values are IPv4 addresses, given as their bits (in `cols` too). */
  readonly ipv4: boolean[];
  /** Per field: whether its vector holds timestamps' milliseconds. */
  readonly ts: boolean[];
  readonly vecs: (Float64Array | Uint32Array | null)[];
  readonly tags: (Uint8Array | null)[];
  /**
   * Per field: whether it ever spilled from its vector into a list (kept by `reset`): a reader
   * that does not know its fields' types (READ_JSON) then gives that field no vector again.
   */
  readonly spilt: boolean[];
  /**
   * Per field of plain text (a scanner's field with no converter: `span(k)`): each record's
   * text as its UTF-8 bytes in the field's arena (`arenas[k]`, `arenaAt[k]` bytes used), at
   * start and end (start -1: null, -2: absent), two entries a record; null for other fields. No
   * string is made: a writer copies the bytes (engine/render/render_bytes.ts, kind "span") and
   * the cache encodes them as they are (engine/fs/column_block.ts's encodeColumns).
   */
  readonly spans: (Int32Array | null)[];
  readonly arenas: Uint8Array[];
  readonly arenaAt: number[];
  /** Per field of spans: whether every byte in its arena is ASCII (below 0x80). */
  readonly ascii: boolean[];

  constructor(fields: number) {
    this.cols = Array.from({ length: fields }, () => []);
    this.ipv4 = new Array<boolean>(fields).fill(false);
    this.ts = new Array<boolean>(fields).fill(false);
    this.vecs = new Array<Float64Array | Uint32Array | null>(fields).fill(null);
    this.tags = new Array<Uint8Array | null>(fields).fill(null);
    this.spilt = new Array<boolean>(fields).fill(false);
    this.spans = new Array<Int32Array | null>(fields).fill(null);
    this.arenas = new Array<Uint8Array>(fields).fill(EMPTY);
    this.arenaAt = new Array<number>(fields).fill(0);
    this.ascii = new Array<boolean>(fields).fill(true);
  }

  /** Field `k`'s texts are kept as their bytes (chosen before any record). */
  span(k: number): void {
    if (this.n > 0) throw new Error("a sink's spans are chosen before its first record");
    this.spans[k] = new Int32Array(2 * this.cap);
    this.arenas[k] = new Uint8Array(4096);
  }

  /** The text `b[s, e)` (s -1: null) as field `k`'s value of the record being put. */
  putSpan(k: number, b: Uint8Array, s: number, e: number): void {
    const spans = this.spans[k]!;
    const q = this.n << 1;
    if (s < 0) {
      spans[q] = -1;
      return;
    }
    let at = this.arenaAt[k]!;
    let arena = this.arenas[k]!;
    if (at + e - s > arena.length) arena = this.#room(k, e - s);
    spans[q] = at;
    let all = 0;
    for (let j = s; j < e; j++) {
      const c = b[j]!;
      arena[at++] = c;
      all |= c;
    }
    spans[q + 1] = at;
    this.arenaAt[k] = at;
    if (all >= 0x80) this.ascii[k] = false;
  }

  /** Field `k`'s arena with room for `n` more bytes. */
  #room(k: number, n: number): Uint8Array {
    const had = this.arenas[k]!;
    const more = new Uint8Array(Math.max(2 * had.length, this.arenaAt[k]! + n));
    more.set(had.subarray(0, this.arenaAt[k]));
    return this.arenas[k] = more;
  }

  /**
   * Field `k`'s values go to a vector: numbers, IPv4 addresses' bits or timestamps' milliseconds
   * (chosen before any record). A sink `reset` for the next block keeps a vector of that kind.
   */
  vector(k: number, kind: "num" | "ip4" | "ts"): void {
    if (this.n > 0) throw new Error("a sink's vectors are chosen before its first record");
    this.ipv4[k] = kind === "ip4";
    this.ts[k] = kind === "ts";
    const had = this.vecs[k];
    if (had != null && had instanceof Uint32Array === (kind === "ip4")) return;
    this.vecs[k] = kind === "ip4" ? new Uint32Array(this.cap) : new Float64Array(this.cap);
    this.tags[k] = new Uint8Array(this.cap);
  }

  /**
   * Empty again for the next block, its vectors kept at their size (a block's records grew them
   * from 1 024 by doubling: for each block of a scan, allocations and copies that cost about as
   * much as encoding the block). Their values are left: every record writes its own, or a tag
   * (the tags are cleared here).
   */
  reset(): void {
    for (let k = 0; k < this.cols.length; k++) {
      this.tags[k]?.fill(0, 0, this.n);
      if (this.cols[k]!.length > 0) this.cols[k] = [];
      this.arenaAt[k] = 0;
      this.ascii[k] = true;
    }
    this.n = 0;
  }

  /** Room for the next record in every vector. */
  grow(): void {
    this.cap = Math.max(1024, this.cap * 2);
    for (let k = 0; k < this.vecs.length; k++) {
      const v = this.vecs[k];
      if (v === null || v === undefined) continue;
      const more = v instanceof Uint32Array
        ? new Uint32Array(this.cap)
        : new Float64Array(this.cap);
      more.set(v);
      this.vecs[k] = more;
      const tags = new Uint8Array(this.cap);
      tags.set(this.tags[k]!);
      this.tags[k] = tags;
    }
    for (let k = 0; k < this.spans.length; k++) {
      const had = this.spans[k];
      if (had === null || had === undefined) continue;
      const more = new Int32Array(2 * this.cap);
      more.set(had);
      this.spans[k] = more;
    }
  }

  /** Field `k`'s vector turned into a list, `value` the current record's (the n-th). */
  spill(k: number, value: unknown): void {
    const v = this.vecs[k]!;
    const t = this.tags[k]!;
    const out = new Array<unknown>(this.n + 1);
    const ts = this.ts[k];
    for (let i = 0; i < this.n; i++) {
      out[i] = t[i] === 0 ? (ts ? new Timestamp(v[i]!) : v[i]) : t[i] === 1 ? null : undefined;
    }
    out[this.n] = value;
    this.cols[k] = out;
    this.vecs[k] = null;
    this.tags[k] = null;
    this.spilt[k] = true;
  }

  /** Field `k`'s values so far made a list of texts, and kept so from now on (spilt). */
  #unspan(k: number): void {
    const spans = this.spans[k]!;
    const out = new Array<string | null | undefined>(this.n);
    for (let i = 0; i < this.n; i++) {
      const s = spans[2 * i]!;
      out[i] = s === -1
        ? null
        : s === -2
        ? undefined
        : bytesText(this.arenas[k]!, s, spans[2 * i + 1]!);
    }
    this.cols[k] = out;
    this.spans[k] = null;
    this.arenas[k] = EMPTY;
    this.spilt[k] = true;
  }

  /** A row's values (a line the scanner left to the expression) as the next record. */
  putRow(names: readonly string[], row: Row): void {
    if (this.n === this.cap) this.grow();
    const n = this.n;
    for (let k = 0; k < names.length; k++) {
      this.#put(k, n, Object.hasOwn(row, names[k]!) ? row[names[k]!] : undefined);
    }
    this.n = n + 1;
  }

  /** The next record from its values by field (READ_JSON's path reader gives them so). */
  putValues(values: readonly Value[]): void {
    if (this.n === this.cap) this.grow();
    const n = this.n;
    for (let k = 0; k < values.length; k++) this.#put(k, n, values[k]);
    this.n = n + 1;
  }

  #put(k: number, n: number, v: unknown): void {
    const spans = this.spans[k];
    if (spans !== null && spans !== undefined) {
      if (v === null || v === undefined) {
        spans[n << 1] = v === null ? -1 : -2;
        return;
      }
      // A text as its UTF-8 bytes (one with a lone surrogate would not read back the same).
      if (typeof v === "string" && v.isWellFormed()) {
        if (this.arenaAt[k]! + 3 * v.length > this.arenas[k]!.length) this.#room(k, 3 * v.length);
        const at = this.arenaAt[k]!;
        const { written } = encoder.encodeInto(v, this.arenas[k]!.subarray(at));
        spans[n << 1] = at;
        spans[(n << 1) + 1] = this.arenaAt[k] = at + written;
        if (written !== v.length) this.ascii[k] = false;
        return;
      }
      this.#unspan(k);
    }
    const vec = this.vecs[k];
    if (vec === null || vec === undefined) {
      this.cols[k]!.push(
        this.ipv4[k] && v instanceof IpAddr && v.version === 4 ? v.bits as number : v,
      );
    } else if (v === null || v === undefined) this.tags[k]![n] = v === null ? 1 : 2;
    else if (this.ipv4[k]) {
      if (v instanceof IpAddr && v.version === 4) vec[n] = v.bits as number;
      else this.spill(k, v);
    } else if (this.ts[k]) {
      if (v instanceof Timestamp) vec[n] = v.ms;
      else this.spill(k, v);
    } else if (typeof v === "number") vec[n] = v;
    else this.spill(k, v);
  }
}

/**
 * The columns `fields` of the records in `sink` (filled for the fields `names`) as vectors, for
 * a writer of a result's bytes (engine/render/render_bytes.ts): typed vectors as they are, the
 * other fields' values as they are listed (a field not among `names`: absent).
 */
export function sinkVectors(
  sink: ColumnSink,
  names: readonly string[],
  fields: readonly string[],
): ColumnVectors[] {
  const n = sink.n;
  return fields.map((name): ColumnVectors => {
    const k = names.indexOf(name);
    if (k < 0) return { kind: "values", list: new Array<undefined>(n) };
    const vec = sink.vecs[k];
    if (vec !== null && vec !== undefined) {
      const kind = sink.ipv4[k] ? "ip4" : sink.ts[k] ? "ts" : "num";
      return { kind, vec: vec.subarray(0, n), tags: sink.tags[k]!.subarray(0, n) };
    }
    const spans = sink.spans[k];
    if (spans !== null && spans !== undefined) {
      return {
        kind: "span",
        bytes: sink.arenas[k]!.subarray(0, sink.arenaAt[k]),
        vec: spans.subarray(0, 2 * n),
      };
    }
    const col = sink.cols[k]! as (Value | undefined)[];
    // An address field's list holds IPv4 addresses as their bits (and other values as Values).
    const list = sink.ipv4[k] ? col.map((v) => typeof v === "number" ? new IpAddr(4, v) : v) : col;
    return { kind: "values", list };
  });
}

/** The element did not match here, whatever the lengths tried: an optional one is absent. */
const NO_MATCH = -1;
/** The scanner's path failed or met what it does not model: the expression decides. */
const DEFER = -2;

const NL = 0x0a;
const DASH = 0x2d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const SUPPORTED: ReadonlySet<MatcherName> = new Set<MatcherName>([
  "INT",
  "LONG",
  "WORD",
  "NSPACE",
  "DQS",
  "IPV4",
  "IPADDR",
  "HTTPDATE",
]);

/** Matchers that take a lone `-` as absent when optional (matchers.ts's dashIsAbsent). */
const DASH_ABSENT: ReadonlySet<MatcherName> = new Set<MatcherName>([
  "INT",
  "LONG",
  "WORD",
  "IPV4",
  "IPADDR",
  "HTTPDATE",
]);

/** How a needed field's value is made from its bytes. */
type Output = "int" | "long" | "ipv4" | "text";

/**
 * The scanner of `elements` building rows of `needed`, or null when the pattern has a shape
 * it does not cover (the regular expression then does all the work). The scan is one function
 * generated from the pattern, so that V8 compiles each element's comparisons in line.
 */
export function makeByteScanner(
  elements: readonly PatternElement[],
  needed: readonly string[],
  timeZone: string,
  filter?: PushedFilter,
  direct?: DirectGroups,
  sink?: ColumnSink,
): ByteScanner | null {
  for (const el of elements) {
    if (el.kind === "choice") return null;
    if (el.kind === "literal" && (el.optional || !/^[\x20-\x7e\t]+$/.test(el.text))) return null;
    if (el.kind === "matcher" && !SUPPORTED.has(el.matcher)) return null;
  }
  const slotOf = new Map(needed.map((n, k) => [n, k]));
  const outputs: Output[] = needed.map(() => "text");
  const converters: Converter[] = needed.map(() => identity);
  /** Fields whose converter gives timestamps (a sink keeps their milliseconds in a vector). */
  const times = new Set<number>();
  const found = new Set<string>();
  let code = "";
  for (let e = 0; e < elements.length; e++) {
    const el = elements[e]!;
    if (el.kind === "choice") return null;
    if (el.kind === "literal") {
      code += literalCode(bytesOf(el.text), "i", "return undefined;") +
        `i += ${el.text.length};\n`;
      continue;
    }
    const next = elements[e + 1];
    if (next !== undefined && next.kind !== "literal") return null;
    const follow = next === undefined ? null : bytesOf(next.text);
    // A greedy run that could also take the literal's first byte would need backtracking;
    // only NSPACE handles it (by trying the literal at each end, longest first).
    if (follow !== null && el.matcher !== "NSPACE" && mayContinue(el.matcher, follow[0]!)) {
      return null;
    }
    const slot = el.name === null ? -1 : slotOf.get(el.name) ?? -1;
    if (slot >= 0) {
      found.add(el.name!);
      converters[slot] = matcherSpec(el.matcher, el.argument, timeZone).makeConverter(
        noFileClock(),
      );
      if (el.matcher === "HTTPDATE") times.add(slot);
      outputs[slot] = el.matcher === "INT"
        ? "int"
        : el.matcher === "LONG"
        ? "long"
        : el.matcher === "IPV4" || el.matcher === "IPADDR"
        ? "ipv4"
        : "text";
    }
    let body: string;
    if (el.matcher === "NSPACE" && follow !== null && isNonSpace(follow[0]!)) {
      // Absent, the literal would have to be tried where the run was: left to the expression.
      if (el.optional) return null;
      body = runBeforeLiteralCode(slot, follow);
      e++; // the literal is part of the step
    } else body = matcherCode(el.matcher, slot);
    // `r`: the offset after the element, NO_MATCH or DEFER.
    code += `r = ${NO_MATCH};\nm${e}: {\n${body}}\n`;
    if (!el.optional) code += `if (r < 0) return undefined;\ni = r;\n`;
    else {
      code += `if (r === ${DEFER}) return undefined;\n`;
      code += `if (r >= 0) i = r;\nelse {\n`;
      if (slot >= 0) code += `s${slot} = -1;\n`;
      // `(?:body|-)?`: the dash is tried after the body, before nothing.
      if (DASH_ABSENT.has(el.matcher)) code += `if (b[i] === ${DASH}) i++;\n`;
      code += "}\n";
    }
  }
  for (const name of needed) if (!found.has(name)) return null;
  const declarations = needed.map((_, k) => `let s${k} = -1, e${k} = 0, n${k} = 0, d${k} = 0;`)
    .join("\n");
  // With a sink, each value is pushed to its field's column instead (an IPv4 address as its
  // bits), and no row is made.
  const pushes: string[] = [];
  /** Fields kept as their bytes (ColumnSink.span): plain texts, no string made. */
  const spanned: number[] = [];
  const props = needed.map((name, k) => {
    const key = name === "__proto__" ? '["__proto__"]' : JSON.stringify(name);
    // Into the field's vector while it has one (ColumnSink), else its list.
    pushes.push(
      outputs[k] === "ipv4"
        ? `if (VS[${k}] !== null) { if (s${k} < 0 || n${k} < 0) TS[${k}][N] = 1; else VS[${k}][N] = n${k}; }
else C[${k}].push(s${k} < 0 || n${k} < 0 ? null : n${k});`
        : "",
    );
    let value: string;
    switch (outputs[k]) {
      case "int":
      case "long":
        value = `integer(b, s${k}, e${k}, n${k}, d${k}, ${outputs[k] === "int"}, c${k})`;
        break;
      case "ipv4":
        value = `n${k} < 0 ? null : new IpAddr(4, n${k})`;
        break;
      default:
        // HTTPDATE straight from its bytes (no text made); other texts through their reader.
        value = times.has(k)
          ? `D[${k}](b, s${k})`
          : converters[k] === identity
          ? `T[${k}](b, s${k}, e${k})`
          : `c${k}(T[${k}](b, s${k}, e${k}))`;
    }
    if (outputs[k] === "int" || outputs[k] === "long") {
      // A value of at most 15 digits is its number (an INT beyond 32 bits is null); a longer
      // one is converted from its text, and the field's values become a list.
      const fits = outputs[k] === "int"
        ? `if (n${k} >= -2147483648 && n${k} <= 2147483647) VS[${k}][N] = n${k}; else TS[${k}][N] = 1;`
        : `VS[${k}][N] = n${k};`;
      pushes[k] = `if (VS[${k}] !== null) {
  if (s${k} < 0) TS[${k}][N] = 1;
  else if (d${k} <= 15) { ${fits} }
  else sink.spill(${k}, ${value});
} else C[${k}].push(s${k} < 0 ? null : ${value});`;
    }
    if (
      sink !== undefined && outputs[k] === "text" && !times.has(k) && converters[k] === identity
    ) {
      spanned.push(k);
      pushes[k] = `if (SP[${k}] !== null) sink.putSpan(${k}, b, s${k}, e${k});
else C[${k}].push(s${k} < 0 ? null : ${value});`;
      return `${key}: s${k} < 0 ? null : ${value}`;
    }
    if (sink !== undefined && outputs[k] === "text") {
      // Read once, for the sink and then the filter or the row.
      pushes[k] = `const x${k} = s${k} < 0 ? null : ${value};\n` +
        (times.has(k)
          ? `if (VS[${k}] !== null) {
  if (x${k} === null) TS[${k}][N] = 1;
  else if (x${k} instanceof Timestamp) VS[${k}][N] = x${k}.ms;
  else sink.spill(${k}, x${k});
} else C[${k}].push(x${k});`
          : `C[${k}].push(x${k});`);
      return `${key}: x${k}`;
    }
    if (pushes[k] === "") pushes[k] = `C[${k}].push(s${k} < 0 ? null : ${value});`;
    return `${key}: s${k} < 0 ? null : ${value}`;
  });
  if (sink !== undefined) {
    for (let k = 0; k < needed.length; k++) {
      if (outputs[k] !== "text") sink.vector(k, outputs[k] === "ipv4" ? "ip4" : "num");
      else if (times.has(k)) sink.vector(k, "ts");
    }
    for (const k of spanned) sink.span(k);
  }
  // The filter sees a row of the fields it reads (all needed): a dropped record costs no more.
  const filtered = filter !== undefined && [...filter.reads].every((n) => slotOf.has(n));
  const test = !filtered
    ? ""
    : `if (!keep({ ${
      needed.flatMap((n, k) => filter.reads.has(n) ? [props[k]] : []).join(", ")
    } })) return null;`;
  const fold = sink !== undefined || direct === undefined || (filter !== undefined && !filtered)
    ? ""
    : directCode(direct, slotOf, outputs);
  // Folding, the grouping's arrays are held in variables, read again after each `add`.
  const folded = direct === undefined || fold === "" ? [] : direct.folds.map((_, i) => i);
  const refresh = fold === "" ? "" : `const t = direct.ipv4();
T_SLOTS = t.slots; T_SHIFT = t.shift; SMALL = direct.smallInts();
${folded.map((i) => `V${i} = direct.values(${i}); F${i} = direct.flags(${i});`).join("\n")}`;
  const source = `
let wordsOf = null, words = null;
let T_SLOTS = null, T_SHIFT = 0, SMALL = null${
    folded.map((i) => `, V${i} = null, F${i} = null`).join("")
  };
function refresh() {
${refresh}
}
refresh();
state.refresh = refresh;
return function scan(b, from, lineEnd) {
if (b !== wordsOf) { wordsOf = b; words = wordView(b); }
let i = from, r = 0, j = 0, c = 0;
${declarations}
${code}
// The rest of the line is ignored.
if (lineEnd !== undefined && lineEnd >= i) i = lineEnd;
else while (b[i] !== ${NL}) i++;
state.next = i + 1;
${
    sink !== undefined
      ? `const N = sink.n;
if (N === sink.cap) sink.grow();
const C = sink.cols, VS = sink.vecs, TS = sink.tags, SP = sink.spans;
${pushes.join("\n")}
sink.n = N + 1;`
      : ""
  }
${
    sink !== undefined ? "return null;" : `${test}
${fold}
const row = { ${props.join(", ")} };
return ${filter !== undefined && !filtered ? "keep(row) ? row : null" : "row"};`
  }
};`;
  const state = { next: 0, refresh: () => {} };
  const make = generatedFunction([
    "state",
    "IpAddr",
    "Timestamp",
    "integer",
    "wordView",
    "skipQuoted",
    "skipNonSpace",
    "keep",
    "direct",
    "sink",
    "T",
    "D",
    ...converters.map((_, k) => `c${k}`),
  ], source);
  const scan = make(
    state,
    IpAddr,
    Timestamp,
    integer,
    wordView,
    skipQuoted,
    skipNonSpace,
    filter?.keep,
    direct,
    sink,
    // A time is read from its bytes (D), any other text through its field's reader (T).
    needed.map((_, k) => times.has(k) ? null : fieldText()),
    needed.map((_, k) => times.has(k) ? httpDateReader() : null),
    ...converters,
  ) as (
    b: Uint8Array,
    from: number,
    lineEnd?: number,
  ) => Row | null | undefined;
  return {
    scan,
    get next() {
      return state.next;
    },
    folds: fold !== "",
    refresh: () => state.refresh(),
  };
}

/**
 * Code that folds a record into `direct` (a grouping: group_table.ts) and returns null, for a
 * record whose group exists and whose values are plain numbers; other records go on to be
 * rows, which the grouping takes in order. Empty when the grouping's key or values are not
 * fields this scanner gives as numbers (an IPv4 address, an INT or LONG).
 */
function directCode(
  direct: DirectGroups,
  slotOf: ReadonlyMap<string, number>,
  outputs: readonly Output[],
): string {
  const key = slotOf.get(direct.key);
  if (key === undefined) return "";
  let find: string;
  if (outputs[key] === "ipv4") {
    // Uint32Table.get, over the slots and shift `refresh` read.
    find = `let g = -1;
if (n${key} >= 0) {
  let at = (Math.imul(n${key}, 0x9e3779b1) >>> T_SHIFT) << 1;
  const mask = T_SLOTS.length - 2;
  for (;;) {
    const x = T_SLOTS[at + 1];
    if (x === 0) break;
    if (T_SLOTS[at] === n${key}) { g = x - 1; break; }
    at = (at + 2) & mask;
  }
}`;
  } else if (outputs[key] === "int" || outputs[key] === "long") {
    // GroupTable numbers integer keys from 0 to SMALL_INTS by an array, the others by a map.
    find = `const g = SMALL !== null && d${key} <= 15 && n${key} >= 0 && n${key} < ${SMALL_INTS}
  ? SMALL[n${key}] - 1
  : -1;`;
  } else return "";
  // A value that is null or not a plain number (INT beyond 32 bits, more than 15 digits) is
  // left to the row.
  const plain: string[] = [];
  const adds: string[] = [];
  for (let i = 0; i < direct.folds.length; i++) {
    const { kind, field } = direct.folds[i]!;
    if (field === null) {
      if (kind !== "count") return "";
      adds.push(`V${i}[g]++;`);
      continue;
    }
    const k = slotOf.get(field);
    if (k === undefined || (outputs[k] !== "int" && outputs[k] !== "long")) return "";
    plain.push(
      outputs[k] === "int"
        ? `(s${k} < 0 || (d${k} <= 15 && n${k} >= -2147483648 && n${k} <= 2147483647))`
        : `(s${k} < 0 || d${k} <= 15)`,
    );
    adds.push(
      kind === "count"
        ? `if (s${k} >= 0) V${i}[g]++;`
        : `if (s${k} >= 0) { V${i}[g] += n${k}; F${i}[g] |= 1; }`,
    );
  }
  return `if (s${key} >= 0${plain.map((p) => ` && ${p}`).join("")}) {
${find}
if (g >= 0) {
${adds.join("\n")}
return null;
}
}`;
}

/** Code that runs `fail` unless the bytes at `at` are `text`. */
function literalCode(text: Uint8Array, at: string, fail: string): string {
  const tests = Array.from(text, (c, k) => `b[${at} + ${k}] !== ${c}`);
  return `if (${tests.join(" || ")}) ${fail}\n`;
}

const IS_DIGIT = (v: string) => `(${v} >= 48 && ${v} <= 57)`;
const IS_WORD = (v: string) =>
  `((${v} >= 48 && ${v} <= 57) || (${v} >= 65 && ${v} <= 90) || (${v} >= 97 && ${v} <= 122) || ${v} === 95)`;
const IS_HEX = (v: string) =>
  `((${v} >= 48 && ${v} <= 57) || (${v} >= 65 && ${v} <= 70) || (${v} >= 97 && ${v} <= 102))`;
const IS_ALPHA = (v: string) => `((${v} >= 65 && ${v} <= 90) || (${v} >= 97 && ${v} <= 122))`;
const IS_SPACE = (v: string) => `(${v} === 32 || (${v} >= 9 && ${v} <= 13))`;

function mark(slot: number, start: string, end: string): string {
  return slot < 0 ? "" : `s${slot} = ${start}; e${slot} = ${end};\n`;
}

/**
 * The code of one element starting at `i`: it sets `r` to the offset after it, or leaves
 * NO_MATCH (set before) or sets DEFER, breaking out of its labeled block `m<e>` by ending.
 */
function matcherCode(matcher: MatcherName, slot: number): string {
  switch (matcher) {
    case "INT":
    case "LONG":
      // [-+]?\d+, its value gathered on the way.
      return `j = i; c = b[j];
if (c === 43 || c === 45) c = b[++j];
if (${IS_DIGIT("c")}) {
  let n = 0, d = 0;
  while (${IS_DIGIT("c")}) { n = n * 10 + (c - 48); d++; c = b[++j]; }
  ${slot < 0 ? "" : `n${slot} = b[i] === 45 ? -n : n; d${slot} = d;`}
  ${mark(slot, "i", "j")}r = j;
}
`;
    case "WORD":
      return `j = i; c = b[j];
while (${IS_WORD("c")}) c = b[++j];
if (j > i) { ${mark(slot, "i", "j")}r = j; }
`;
    case "NSPACE":
      // \S+ before white space or the end of the pattern; control characters and non-ASCII
      // bytes are not modelled.
      return `j = words === null ? i : skipNonSpace(b, words, i); c = b[j];
while (c > 32 && c < 128) c = b[++j];
if (!${IS_SPACE("c")}) r = ${DEFER};
else if (j > i) { ${mark(slot, "i", "j")}r = j; }
`;
    case "DQS":
      // "[^"\\\n]*(?:\\.[^"\\\n]*)*": one way to match, so a failure is final. \`.\` takes
      // no line terminator; U+2028 and U+2029 after a backslash are not modelled.
      return `dqs: {
if (b[i] !== ${QUOTE}) break dqs;
j = words === null ? i + 1 : skipQuoted(b, words, i + 1); c = b[j];
while (c !== ${QUOTE}) {
  if (c === ${NL}) break dqs;
  if (c === ${BACKSLASH}) {
    c = b[j + 1];
    if (c === ${NL} || c === 13) break dqs;
    if (c >= 128) { r = ${DEFER}; break dqs; }
    j++;
  }
  c = b[++j];
}
${mark(slot, "i + 1", "j")}r = j + 1;
}
`;
    case "IPV4":
    case "IPADDR":
      // \d{1,3}(?:\.\d{1,3}){3}: each of the first three groups is a whole run of 1 to 3
      // digits before a dot (no other split of the digits reaches the dot), the last takes up
      // to 3 digits. An octet above 255 makes the value null (-1). The IPv6 alternative of
      // IPADDR is left to the expression.
      return `ip: {
j = i; let value = 0, valid = true;
for (let group = 0; group < 4; group++) {
  let part = 0, digits = 0;
  c = b[j];
  while (digits < 3 && ${IS_DIGIT("c")}) { part = part * 10 + (c - 48); digits++; c = b[++j]; }
  if (digits === 0 || (group < 3 && c !== 46)) {
    ${matcher === "IPADDR" ? `c = b[i]; if (${IS_HEX("c")} || c === 58) r = ${DEFER};` : ""}
    break ip;
  }
  if (part > 255) valid = false;
  value = value * 256 + part;
  if (group < 3) j++;
}
${slot < 0 ? "" : `n${slot} = valid ? value : -1;`}
${mark(slot, "i", "j")}r = j;
}
`;
    case "HTTPDATE": {
      // \d{2}/[A-Za-z]{3}/\d{4}:\d{2}:\d{2}:\d{2} [-+]\d{4}: one length.
      const shape = "dd/aaa/dddd:dd:dd:dd sdddd";
      const tests = Array.from(shape, (k, at) => {
        const v = `b[i + ${at}]`;
        if (k === "d") return `!${IS_DIGIT(v)}`;
        if (k === "a") return `!${IS_ALPHA(v)}`;
        if (k === "s") return `(${v} !== 43 && ${v} !== 45)`;
        return `${v} !== ${k.charCodeAt(0)}`;
      });
      return `if (!(${tests.join(" || ")})) { ${mark(slot, "i", "i + 26")}r = i + 26; }\n`;
    }
    default:
      throw new Error(`no byte code for ${matcher}`);
  }
}

/**
 * \S+ followed by a literal that starts with a non-space byte: the run's ends are tried from
 * the longest, and the first where the literal follows is the expression's first choice.
 */
function runBeforeLiteralCode(slot: number, literal: Uint8Array): string {
  return `j = words === null ? i : skipNonSpace(b, words, i); c = b[j];
while (c > 32 && c < 128) c = b[++j];
r = ${DEFER};
if (${IS_SPACE("c")}) {
  for (let end = j; end > i; end--) {
    ${literalCode(literal, "end", "continue;")}
    ${mark(slot, "i", "end")}r = end + ${literal.length};
    break;
  }
}
`;
}

function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isWord(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** ASCII bytes that are not `\s` (a byte from 0x80 up is never called so: it defers). */
function isNonSpace(c: number): boolean {
  return c > 0x20 && c < 0x80;
}

/** Whether the run of `matcher` could go on with the byte `c`. */
function mayContinue(matcher: MatcherName, c: number): boolean {
  switch (matcher) {
    case "INT":
    case "LONG":
      return isDigit(c);
    case "WORD":
      return isWord(c);
    case "IPV4":
      return isDigit(c) || c === 0x2e;
    case "IPADDR":
      return isHex(c) || c === 0x2e || c === 0x3a;
    case "NSPACE":
      return isNonSpace(c);
    default: // HTTPDATE and DQS have one length
      return false;
  }
}

/** The bytes of `b` as 32-bit words (whole words only), or null when `b` is not aligned. */
function wordView(b: Uint8Array): Uint32Array | null {
  return (b.byteOffset & 3) === 0 ? new Uint32Array(b.buffer, b.byteOffset, b.length >> 2) : null;
}

// Whether a byte of a word is zero, or below 0x21, or from 0x80 up: exact for the word as a
// whole (the high bit of some byte is set exactly then), which is all the loops below ask.
const ONES = 0x01010101;
const HIGHS = 0x80808080;

/**
 * Past the bytes of a quoted text from `i` on that are neither a quote, a backslash nor a line
 * feed, four at a time where aligned; stops at or before the first other byte.
 */
function skipQuoted(b: Uint8Array, words: Uint32Array, i: number): number {
  while ((i & 3) !== 0) {
    const c = b[i];
    if (c === QUOTE || c === BACKSLASH || c === NL) return i;
    i++;
  }
  let w = i >> 2;
  const n = words.length;
  while (w < n) {
    const v = words[w]!;
    const q = v ^ 0x22222222;
    const s = v ^ 0x5c5c5c5c;
    const l = v ^ 0x0a0a0a0a;
    if (((((q - ONES) & ~q) | ((s - ONES) & ~s) | ((l - ONES) & ~l)) & HIGHS) !== 0) break;
    w++;
  }
  return w << 2;
}

/** Past the ASCII bytes above a space from `i` on, four at a time where aligned. */
function skipNonSpace(b: Uint8Array, words: Uint32Array, i: number): number {
  while ((i & 3) !== 0) {
    const c = b[i];
    if (c !== undefined && (c <= 0x20 || c >= 0x80)) return i;
    i++;
  }
  let w = i >> 2;
  const n = words.length;
  while (w < n) {
    const v = words[w]!;
    if (((((v - 0x21212121) & ~v) | v) & HIGHS) !== 0) break;
    w++;
  }
  return w << 2;
}

/**
 * INT (32 bits) or LONG (a safe integer) from the value gathered while scanning its `digits`
 * (with the sign applied); past 15 digits a double may have rounded it: the converter decides.
 */
function integer(
  b: Uint8Array,
  start: number,
  end: number,
  value: number,
  digits: number,
  int32: boolean,
  convert: Converter,
): Value {
  if (digits > 15) return convert(bytesText(b, start, end));
  if (int32) return value >= -2147483648 && value <= 2147483647 ? value : null;
  return value;
}

/**
 * HTTPDATE's timestamps read from the bytes its matcher checked (httpDateBytesMs, parseHttpDate
 * on bytes): the same Timestamp as the line before while the time is the same, as the text's
 * converter gives.
 */
function httpDateReader(): (b: Uint8Array, at: number) => Timestamp | null {
  let lastMs = NaN;
  let last: Timestamp | null = null;
  return (b, at) => {
    const ms = httpDateBytesMs(b, at);
    if (ms === null) return null;
    if (ms !== lastMs) {
      lastMs = ms;
      last = new Timestamp(ms);
    }
    return last;
  };
}

/** Lookups after which a field whose texts seldom recur stops looking them up. */
const TEXT_TRIAL = 1024;

/**
 * The text reader of one field: short texts seen before come from a table of their strings
 * (engine/values/short_strings.ts: a time of a second, a method, a status text repeat line after
 * line); a field whose texts seldom recur (half of the first TEXT_TRIAL or fewer; paths with ids
 * in them) goes on without the table, whose hashing would only cost.
 */
function fieldText(): (b: Uint8Array, start: number, end: number) => string {
  const table = new ShortStrings();
  let lookups = 0;
  let use = true;
  return (b, start, end) => {
    if (use) {
      const text = table.get(b, start, end);
      if (++lookups === TEXT_TRIAL) use = table.hits * 2 >= lookups;
      if (text !== undefined) return text;
    }
    return bytesText(b, start, end);
  };
}
