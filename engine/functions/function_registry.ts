/** Every scalar function by lower-case name (function names are case-insensitive). */

import { CAST_FUNCTIONS } from "./cast_functions.ts";
import { CONTROL_FUNCTIONS } from "./control_functions.ts";
import type { FunctionDef } from "./function_def.ts";
import { NETWORK_FUNCTIONS } from "./network_functions.ts";
import { STRING_FUNCTIONS } from "./string_functions.ts";
import { TIME_FUNCTIONS } from "./time_functions.ts";

export const FUNCTIONS: ReadonlyMap<string, FunctionDef> = new Map(
  [
    ...STRING_FUNCTIONS,
    ...TIME_FUNCTIONS,
    ...NETWORK_FUNCTIONS,
    ...CAST_FUNCTIONS,
    ...CONTROL_FUNCTIONS,
  ].map((f) => [f.name, f]),
);

/** The scalar function of that name, in any case; undefined when there is none. */
export function lookupFunction(name: string): FunctionDef | undefined {
  return FUNCTIONS.get(name.toLowerCase());
}

/** Lowest and highest number of arguments (highest Infinity for concat and coalesce). */
export function functionArity(def: FunctionDef): { min: number; max: number } {
  return {
    min: def.params.length - (def.optional ?? 0),
    max: def.variadic ? Infinity : def.params.length,
  };
}
