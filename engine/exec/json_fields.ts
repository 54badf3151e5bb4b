/**
 * Reads a few top-level fields of a JSON line without building the whole object, for READ_JSON
 * when a query reads only some fields. It takes only the common shape of log lines, a flat
 * object of strings without escapes, numbers, booleans and nulls, which one native regular
 * expression checks to be valid JSON; a line of any other shape (nested values, backslashes,
 * or not JSON at all) gets `undefined`, and the caller parses it with `JSON.parse` instead,
 * which decides what it holds.
 *
 *   const read = jsonFieldReader(["status"]);
 *   read('{"status":200,"path":"/"}') // { status: 200 }
 *   read('{"status":{"code":200}}')   // undefined: parse it
 */

import type { Row, Value } from "../values/values.ts";

const WS = "[ \\t\\n\\r]*";
// No backslash: a key then equals its text, and a value's text is the string.
const STRING = '"[^"\\\\\\u0000-\\u001f]*"';
const NUMBER = "-?(?:0|[1-9]\\d*)(?:\\.\\d+)?(?:[eE][-+]?\\d+)?";
const SCALAR = `(?:${STRING}|${NUMBER}|true|false|null)`;
const PAIR = `${STRING}${WS}:${WS}${SCALAR}`;
/** A whole line that is a flat JSON object (exactly JSON's grammar for that shape). */
const FLAT_OBJECT = new RegExp(`^${WS}\\{${WS}(?:${PAIR}${WS}(?:,${WS}${PAIR}${WS})*)?\\}${WS}$`);

/** A reader of `names` (own top-level fields) from a line, or undefined for other shapes. */
export function jsonFieldReader(names: readonly string[]): (line: string) => Row | undefined {
  const quoted = names.map((n) => JSON.stringify(n));
  // A name that needs escaping in JSON cannot be found without unescaping: always parse.
  const plain = quoted.every((q, i) => q === `"${names[i]}"`);
  return (line) => {
    // The expression takes no backslash anywhere: not in strings, and outside them no JSON does.
    if (!plain || !FLAT_OBJECT.test(line)) return undefined;
    const row: Row = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = fieldValue(line, quoted[i]!);
    return row;
  };
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/**
 * The value of the key `quoted` in a line known to be a flat object: the last occurrence wins,
 * as with JSON.parse. In such a line a quote inside a string is impossible (no backslash), so
 * `"name"` after `{` or `,` and before `:` is a key, never text within a string.
 */
function fieldValue(line: string, quoted: string): Value {
  let at = line.lastIndexOf(quoted);
  while (at >= 0) {
    let before = at - 1;
    while (before >= 0 && isSpace(line.charCodeAt(before))) before--;
    let after = at + quoted.length;
    while (after < line.length && isSpace(line.charCodeAt(after))) after++;
    const b = line.charCodeAt(before);
    if ((b === 0x7b /* { */ || b === 0x2c /* , */) && line.charCodeAt(after) === 0x3a /* : */) {
      return scalarAt(line, after + 1);
    }
    at = at === 0 ? -1 : line.lastIndexOf(quoted, at - 1);
  }
  return null;
}

/** The scalar whose text starts at or after `from` (after white space). */
function scalarAt(line: string, from: number): Value {
  let i = from;
  while (isSpace(line.charCodeAt(i))) i++;
  const c = line.charCodeAt(i);
  if (c === 0x22 /* " */) return line.slice(i + 1, line.indexOf('"', i + 1));
  if (c === 0x74 /* t */) return true;
  if (c === 0x66 /* f */) return false;
  if (c === 0x6e /* n */) return null;
  let j = i + 1;
  while (j < line.length) {
    const d = line.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || isSpace(d)) break;
    j++;
  }
  return Number(line.slice(i, j));
}
