/**
 * The scanner's kernels written plainly, a byte at a time: the reference that
 * scanner_test.ts holds the WebAssembly against (same lists, same order).
 */

const ESCAPABLE = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74, 0x75]);

function isHex(c: number | undefined): boolean {
  return c !== undefined &&
    ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** SimdScanner.indexJson's lists for `bytes[start, end)` (errors only below `end`). */
export function referenceIndex(
  bytes: Uint8Array,
  start: number,
  end: number,
): { tokens: number[]; backslashes: number[]; errors: number[] } {
  const tokens: number[] = [];
  const backslashes: number[] = [];
  const errors = new Set<number>();
  let inString = false;
  let escapeNext = false;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    const escaped = escapeNext;
    escapeNext = false;
    if (c === 0x5c) backslashes.push(i);
    if (escaped) {
      if (!ESCAPABLE.has(c)) errors.add(i);
      if (c === 0x75) {
        for (let k = 1; k <= 4 && i + k < end; k++) {
          if (!isHex(bytes[i + k])) {
            errors.add(i + k);
            break;
          }
        }
      }
    } else if (c === 0x5c) escapeNext = true;
    if (c === 0x22 && !escaped) {
      inString = !inString;
      tokens.push(i);
      continue;
    }
    if (c === 0x0a && inString) {
      errors.add(i);
      inString = false;
      continue;
    }
    if (inString) {
      if (c < 0x20) errors.add(i);
    } else {
      if (c === 0x5c) errors.add(i);
      if (
        c === 0x7b || c === 0x7d || c === 0x5b || c === 0x5d || c === 0x3a || c === 0x2c
      ) tokens.push(i);
    }
  }
  return { tokens, backslashes, errors: [...errors].sort((a, b) => a - b) };
}

/** SimdScanner.findByte's positions. */
export function referenceFind(bytes: Uint8Array, start: number, end: number, byte: number) {
  const out: number[] = [];
  for (let i = start; i < end; i++) if (bytes[i] === byte) out.push(i);
  return out;
}

/**
 * SimdScanner.indexJson's `valid`: the starts of the lines of `bytes[start, end)` ended by "\n"
 * that JSON.parse takes as an object nested at most 96 deep.
 */
export function referenceValid(bytes: Uint8Array, start: number, end: number): number[] {
  const decoder = new TextDecoder();
  const out: number[] = [];
  for (let line = start; line < end;) {
    const nl = bytes.indexOf(0x0a, line);
    if (nl < 0 || nl >= end) break;
    const text = decoder.decode(bytes.subarray(line, nl));
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      v = undefined;
    }
    if (typeof v === "object" && v !== null && !Array.isArray(v) && depthOf(v) <= 96) {
      out.push(line);
    }
    line = nl + 1;
  }
  return out;
}

function depthOf(v: unknown): number {
  if (typeof v !== "object" || v === null) return 0;
  let most = 0;
  for (const x of Object.values(v)) most = Math.max(most, depthOf(x));
  return most + 1;
}
