/** String functions: lower upper len substr trim contains starts_with ends_with replace split concat regex_extract
 * regex_replace. */

import { arrayOf, scalar } from "../values/types.ts";
import type { Value } from "../values/values.ts";
import { toText } from "../render/render.ts";
import { type FunctionDef, returns, strict1, strict2, strict3 } from "./function_def.ts";
import { compileUserRegex, forRe2, regexMistake, type UserRegex } from "../values/user_regex.ts";
import { RE2JS } from "re2js";

const STRING = scalar("STRING");
const INTEGER = scalar("INTEGER");
const BOOLEAN = scalar("BOOLEAN");

/**
 * A UTF-16 surrogate: a character beyond the first 65 536 (an emoji) takes two units, so that
 * counting or cutting by units would count it twice or cut it in half.
 */
const SURROGATE = /[\uD800-\uDFFF]/;

/** The characters (code points) of `s`. */
function length(s: string): number {
  if (!SURROGATE.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * substr with a 1-based start, counted in characters (code points); a start before 1 counts from
 * 1, as SQL does.
 */
function substr(s: string, start: number, count?: number): string {
  const from = Math.max(0, start - 1);
  const end = count === undefined ? Infinity : start - 1 + count;
  if (end <= from) return "";
  if (!SURROGATE.test(s)) return count === undefined ? s.slice(from) : s.slice(from, end);
  return Array.from(s).slice(from, end).join("");
}

/** A RegExp built once per distinct pattern text (for non-constant patterns). */
function regexCache(ctx: { fail(message: string, argIndex?: number): never }, argIndex: number) {
  let lastText: string | null = null;
  let last: UserRegex | null = null;
  return (text: string): UserRegex => {
    if (text !== lastText) {
      last = compileRegex(text, ctx, argIndex);
      lastText = text;
    }
    return last!;
  };
}

/** Compiles a user's regular expression (engine/values/user_regex.ts), reporting a bad one. */
export function compileRegex(
  text: string,
  ctx: { fail(message: string, argIndex?: number): never },
  argIndex: number,
): UserRegex {
  const compiled = compileUserRegex(text);
  if (compiled.ok) return compiled.regex;
  return ctx.fail(regexMistake(text, compiled), argIndex);
}

export const STRING_FUNCTIONS: readonly FunctionDef[] = [
  {
    name: "lower",
    signature: "lower(s STRING)",
    params: ["STRING"],
    result: returns(STRING),
    compile: strict1((s: string) => s.toLowerCase()),
  },
  {
    name: "upper",
    signature: "upper(s STRING)",
    params: ["STRING"],
    result: returns(STRING),
    compile: strict1((s: string) => s.toUpperCase()),
  },
  {
    name: "len",
    signature: "len(x STRING or ARRAY)",
    params: ["ANY"],
    result: ([a], ctx) => {
      const kind = a!.type.kind;
      if (kind !== "STRING" && kind !== "ARRAY" && kind !== "ANY" && kind !== "NULL") {
        ctx.fail(
          `len needs a STRING (its characters) or an ARRAY (its elements), found ${kind}`,
          0,
        );
      }
      return INTEGER;
    },
    // The characters of a string, the elements of an array; null for anything else.
    compile: strict1((v: Value) =>
      typeof v === "string" ? length(v) : Array.isArray(v) ? v.length : null
    ),
  },
  {
    name: "substr",
    signature: "substr(s STRING, start INTEGER [, length INTEGER])",
    params: ["STRING", "WHOLE", "WHOLE"],
    optional: 1,
    result: returns(STRING),
    compile: (fns, args, ctx) =>
      fns.length === 2
        ? strict2((s: string, start: number) => substr(s, start))(fns, args, ctx)
        : strict3((s: string, start: number, n: number) => substr(s, start, n))(fns, args, ctx),
  },
  {
    name: "trim",
    signature: "trim(s STRING)",
    params: ["STRING"],
    result: returns(STRING),
    compile: strict1((s: string) => s.trim()),
  },
  {
    name: "contains",
    signature: "contains(s STRING, part STRING)",
    params: ["STRING", "STRING"],
    result: returns(BOOLEAN),
    compile: strict2((s: string, p: string) => s.includes(p)),
  },
  {
    name: "starts_with",
    signature: "starts_with(s STRING, prefix STRING)",
    params: ["STRING", "STRING"],
    result: returns(BOOLEAN),
    compile: strict2((s: string, p: string) => s.startsWith(p)),
  },
  {
    name: "ends_with",
    signature: "ends_with(s STRING, suffix STRING)",
    params: ["STRING", "STRING"],
    result: returns(BOOLEAN),
    compile: strict2((s: string, p: string) => s.endsWith(p)),
  },
  {
    name: "replace",
    signature: "replace(s STRING, from STRING, to STRING)",
    params: ["STRING", "STRING", "STRING"],
    result: returns(STRING),
    compile: strict3((s: string, from: string, to: string) =>
      from === "" ? s : s.replaceAll(from, () => to)
    ),
  },
  {
    name: "split",
    signature: "split(s STRING, separator STRING)",
    params: ["STRING", "STRING"],
    result: returns(arrayOf(STRING)),
    compile: strict2((s: string, sep: string) => s.split(sep)),
  },
  {
    name: "concat",
    signature: "concat(a, b, ...)",
    params: ["ANY"],
    variadic: "ANY",
    result: returns(STRING),
    compile: (fns, _args, ctx) => {
      const opts = { timeZone: ctx.timeZone };
      return (row) => {
        let out = "";
        for (const f of fns) {
          const v = f(row);
          if (v !== null) out += typeof v === "string" ? v : toText(v, opts);
        }
        return out;
      };
    },
  },
  {
    name: "regex_extract",
    signature: "regex_extract(s STRING, regex STRING [, group INTEGER])",
    params: ["STRING", "STRING", "WHOLE"],
    optional: 1,
    result: returns(STRING),
    compile: (fns, args, ctx) => {
      const [fs, fr] = fns;
      const fg = fns[2] ?? (() => 0);
      const constant = args[1]!.constant;
      const fixed = constant && typeof constant.value === "string"
        ? compileRegex(constant.value, ctx, 1)
        : null;
      const dynamic = regexCache(ctx, 1);
      return (row) => {
        const s = fs!(row);
        if (s === null) return null;
        const pattern = fixed ? null : fr!(row);
        if (!fixed && pattern === null) return null;
        const r = fixed ?? dynamic(pattern as string);
        const g = fg(row) as number | null;
        if (g === null) return null;
        const m = r.exec(s as string);
        return m ? m[g] ?? null : null;
      };
    },
  },
  {
    name: "regex_replace",
    signature: "regex_replace(s STRING, regex STRING, replacement STRING)",
    params: ["STRING", "STRING", "STRING"],
    result: returns(STRING),
    compile: (fns, args, ctx) => {
      const [fs, fr, ft] = fns;
      const constant = args[1]!.constant;
      const fixed = constant && typeof constant.value === "string"
        ? replacerOf(compileRegex(constant.value, ctx, 1))
        : null;
      const dynamic = regexCache(ctx, 1);
      let lastRegex: UserRegex | null = null;
      let lastReplacer: Replacer | null = null;
      return (row) => {
        const s = fs!(row);
        if (s === null) return null;
        const to = ft!(row);
        if (to === null) return null;
        let replace = fixed;
        if (replace === null) {
          const pattern = fr!(row);
          if (pattern === null) return null;
          const regex = dynamic(pattern as string);
          if (regex !== lastRegex) {
            lastRegex = regex;
            lastReplacer = replacerOf(regex);
          }
          replace = lastReplacer!;
        }
        return replace(s as string, to as string);
      };
    },
  },
];

/** Replaces every match of a regular expression in `s` (`$1`, `$&`, `$$` as JavaScript reads them). */
type Replacer = (s: string, replacement: string) => string;

/**
 * The replace-all of a user's regular expression, on the engine user_regex.ts chose for it:
 * V8 when it is proved bounded, else re2js (linear), whose replacement strings read the same.
 */
function replacerOf(regex: UserRegex): Replacer {
  if (regex.native) {
    const global = new RegExp(regex.body, regex.ignoreCase ? "giu" : "gu");
    return (s, to) => s.replace(global, to);
  }
  const linear = RE2JS.compile(
    forRe2(regex.body),
    regex.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0,
  );
  return (s, to) => linear.matcher(s).replaceAll(to);
}
