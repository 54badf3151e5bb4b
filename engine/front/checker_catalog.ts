/**
 * Every function of the language (LANGUAGE.md section 5) with its number of arguments and
 * whether it aggregates, for the checker. Nothing is declared here: each function declares its
 * parameters once, beside its implementation (engine/functions/), and this list is derived.
 */

import { AGGREGATES } from "../functions/aggregates.ts";
import { functionArity, FUNCTIONS } from "../functions/function_registry.ts";
import { WINDOW_FUNCTIONS } from "../functions/window_functions.ts";

export interface FunctionSignature {
  /** Lower case; function names are case-insensitive. */
  readonly name: string;
  readonly minArgs: number;
  /** `Infinity` for variadic functions such as concat. */
  readonly maxArgs: number;
  /** Computed over the rows of a group; allowed only in select. */
  readonly aggregate: boolean;
  /** Accepts `*` as its argument: only count(*). */
  readonly star?: boolean;
  /** Computed over the ordered rows of a group; allowed only in window(...). */
  readonly window?: boolean;
}

export const FUNCTION_CATALOG: readonly FunctionSignature[] = [
  ...[...AGGREGATES].map(([name, def]): FunctionSignature => ({
    name,
    minArgs: 1 + (def.params?.names.length ?? 0),
    maxArgs: 1 + (def.params?.names.length ?? 0),
    aggregate: true,
    ...(def.star ? { star: true } : {}),
  })),
  ...[...WINDOW_FUNCTIONS.values()].map((def): FunctionSignature => ({
    name: def.name,
    minArgs: def.minArgs,
    maxArgs: def.maxArgs,
    aggregate: false,
    window: true,
  })),
  ...[...FUNCTIONS.values()].map((def): FunctionSignature => {
    const { min, max } = functionArity(def);
    return { name: def.name, minArgs: min, maxArgs: max, aggregate: false };
  }),
];

const byName = new Map(FUNCTION_CATALOG.map((f) => [f.name, f]));

/** The signature of a function by name (case-insensitive), or undefined when there is none. */
export function lookupFunction(name: string): FunctionSignature | undefined {
  return byName.get(name.toLowerCase());
}
