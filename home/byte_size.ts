/** Byte sizes as people write them in settings: `1048576`, `512 KiB`, `64 MiB`, `10 MB`. */

const UNIT_BYTES: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

export const BYTE_SIZE_FORM =
  "a whole number of bytes, or a number with a unit B, KB, MB, GB, KiB, MiB, GiB (e.g. '64 MiB')";

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$/;

/**
 * Parses a byte size into whole bytes, or returns undefined when the text is not one.
 *
 * @example parseByteSize("64 MiB") // 67108864
 */
export function parseByteSize(text: string): number | undefined {
  const m = SIZE.exec(text);
  if (!m) return undefined;
  const unit = m[2] === "" ? 1 : UNIT_BYTES[m[2]!.toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Number(m[1]) * unit;
  if (!Number.isSafeInteger(bytes)) return undefined;
  return bytes;
}

/**
 * A byte size as a setting would say it: the largest binary unit that divides it, else bytes.
 *
 * @example formatByteSize(67108864) // "64 MiB"
 */
export function formatByteSize(bytes: number): string {
  for (const unit of ["TiB", "GiB", "MiB", "KiB"]) {
    const size = UNIT_BYTES[unit.toLowerCase()]!;
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}
