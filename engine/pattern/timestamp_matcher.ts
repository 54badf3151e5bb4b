/**
 * TIMESTAMP('yyyy-MM-dd HH:mm:ss.SSS'): a regular expression for the text a Java-style time
 * pattern describes (the letters engine/values/time_pattern.ts understands), and its parser.
 */

import { checkTimePattern, compileTimestampParser } from "../values/time_pattern.ts";

const OFFSET = "(?:[Zz]|[-+]\\d{2}(?::?\\d{2})?)";

function fieldSource(letter: string, count: number): string {
  switch (letter) {
    case "y":
    case "u":
      return count === 2 ? "\\d{2}" : "\\d{4}";
    case "M":
      if (count >= 4) return "[A-Za-z]{3,9}";
      if (count === 3) return "[A-Za-z]{3}";
      return count === 1 ? "\\d{1,2}" : `\\d{${count}}`;
    case "S":
      // `S` alone: an unpadded count of milliseconds (time_pattern.ts).
      return count === 1 ? "\\d{1,3}" : `\\d{${count}}`;
    case "a":
      return "[AaPp][Mm]";
    case "E":
      return "[A-Za-z]{3,9}";
    case "Z":
    case "X":
    case "x":
      return OFFSET;
    case "z":
    case "V":
      // A zone's name: an abbreviation (`CEST`) or an IANA name (`America/Argentina/Salta`).
      return "[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*";
    default: // d H h m s
      return count === 1 ? "\\d{1,2}" : `\\d{${count}}`;
  }
}

/** Throws an Error with a message for the user when the time pattern is not valid. */
export function timestampMatcher(
  pattern: string,
): {
  source: string;
  parse: (text: string, zone: string) => number | null;
  /** For a pattern with no year (no `y`, `u`): the text read as if of `year`; else null. */
  parseInYear: ((text: string, year: number, zone: string) => number | null) | null;
} {
  const problem = checkTimePattern(pattern);
  if (problem !== null) throw new Error(problem);
  if (pattern.trim() === "") throw new Error("the time pattern of TIMESTAMP is empty");
  let source = "";
  let hasYear = false;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        source += "'";
        i += 2;
        continue;
      }
      let j = i + 1;
      let literal = "";
      while (j < pattern.length) {
        if (pattern[j] === "'") {
          if (pattern[j + 1] === "'") {
            literal += "'";
            j += 2;
            continue;
          }
          break;
        }
        literal += pattern[j++];
      }
      source += RegExp.escape(literal);
      i = j + 1;
    } else if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (pattern[j] === c) j++;
      if (c === "y" || c === "u") hasYear = true;
      source += fieldSource(c, j - i);
      i = j;
    } else {
      source += RegExp.escape(c);
      i++;
    }
  }
  const parse = compileTimestampParser(pattern);
  if (hasYear) return { source, parse, parseInYear: null };
  const inYear = compileTimestampParser(`yyyy ${pattern}`);
  return { source, parse, parseInYear: (text, year, zone) => inYear(`${year} ${text}`, zone) };
}
