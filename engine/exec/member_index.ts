/**
 * The members a JSON path reader looks for in one object, found by a key's bytes: by its length
 * first (a table), so that most keys of a record have no byte compared. Both path readers
 * (json_line_reader.ts on the bytes, json_index_reader.ts on the scanner's index) look keys up
 * here, in their hot loop.
 *
 *   const index = new MemberIndex([bytesOf("status"), bytesOf("location")]);
 *   index.find(b, keyStart, keyEnd); // 1 when b[keyStart, keyEnd) is "location", -1 for none
 */

/** In the table by length: several keys have this length. */
const MANY_OF_LENGTH = -2;

export class MemberIndex {
  readonly #keys: readonly Uint8Array[];
  /**
   * By a key's length: the one key of that length, MANY_OF_LENGTH when several have it, -1
   * when none does.
   */
  readonly #byLength: Int16Array;

  /** `keys`: the members' keys (ASCII bytes), each once. */
  constructor(keys: readonly Uint8Array[]) {
    this.#keys = keys;
    const byLength = new Int16Array(Math.max(0, ...keys.map((k) => k.length)) + 1).fill(-1);
    keys.forEach((key, k) => {
      byLength[key.length] = byLength[key.length] === -1 ? k : MANY_OF_LENGTH;
    });
    this.#byLength = byLength;
  }

  /** The position of the key whose bytes are `b[start, end)`, or -1 when none is. */
  find(b: Uint8Array, start: number, end: number): number {
    const keys = this.#keys;
    const byLength = this.#byLength;
    const length = end - start;
    const found = length < byLength.length ? byLength[length]! : -1;
    if (found === MANY_OF_LENGTH) {
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k]!;
        if (key.length === length && sameKey(b, start, key)) return k;
      }
      return -1;
    }
    return found >= 0 && !sameKey(b, start, keys[found]!) ? -1 : found;
  }
}

/** Whether the bytes at `start` are those of `key` (the caller compared the lengths). */
function sameKey(b: Uint8Array, start: number, key: Uint8Array): boolean {
  for (let j = 0; j < key.length; j++) if (b[start + j] !== key[j]) return false;
  return true;
}
