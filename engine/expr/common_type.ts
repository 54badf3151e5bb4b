/**
 * The one type several expressions share (branches of `if`, arguments of `coalesce`, elements
 * of an `in` list): numbers widen to the widest, NULL fits anything, ANY absorbs the rest.
 * Unlike types.ts's `widen`, a real clash (IPADDR and STRING) is not papered over.
 */

import { isNumeric, NULL_TYPE, sameType, type Type, widen } from "../values/types.ts";

/** The common type, or null when two of the types clash. */
export function commonType(types: readonly Type[]): Type | null {
  let out: Type = NULL_TYPE;
  let any = false;
  for (const t of types) {
    if (t.kind === "NULL") continue;
    if (t.kind === "ANY") {
      any = true;
      continue;
    }
    if (out.kind === "NULL") out = t;
    else if (!compatible(out, t)) return null;
    else out = widen(out, t);
  }
  return any ? { kind: "ANY" } : out;
}

/** True when values of both types can meet in one column or one comparison. */
export function compatible(a: Type, b: Type): boolean {
  if (a.kind === "NULL" || b.kind === "NULL" || a.kind === "ANY" || b.kind === "ANY") return true;
  if (isNumeric(a) && isNumeric(b)) return true;
  if (a.kind === "ARRAY" && b.kind === "ARRAY") return compatible(a.element, b.element);
  if (a.kind === "TUPLE" && b.kind === "TUPLE") return true;
  return sameType(a, b);
}
