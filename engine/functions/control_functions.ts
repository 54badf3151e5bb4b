/** coalesce(a, b, ...) and if(cond, a, b): both evaluate only what they need. */

import { commonType } from "../expr/common_type.ts";
import { typeToString } from "../values/types.ts";
import type { FunctionDef } from "./function_def.ts";

export const CONTROL_FUNCTIONS: readonly FunctionDef[] = [
  {
    name: "coalesce",
    signature: "coalesce(a, b, ...)",
    params: ["ANY"],
    variadic: "ANY",
    result: (args, ctx) => {
      const t = commonType(args.map((a) => a.type));
      if (t === null) {
        return ctx.fail(
          `coalesce needs arguments of one type, found ${
            args.map((a) => typeToString(a.type)).join(", ")
          }`,
        );
      }
      return t;
    },
    compile: (fns) => (row) => {
      for (const f of fns) {
        const v = f(row);
        if (v !== null) return v;
      }
      return null;
    },
  },
  {
    name: "if",
    signature: "if(condition BOOLEAN, then, else)",
    params: ["BOOLEAN", "ANY", "ANY"],
    result: (args, ctx) => {
      const t = commonType([args[1]!.type, args[2]!.type]);
      if (t === null) {
        return ctx.fail(
          `the branches of if must have one type, found ${typeToString(args[1]!.type)} and ${
            typeToString(args[2]!.type)
          }`,
        );
      }
      return t;
    },
    // A null condition takes the else branch, as SQL's CASE does.
    compile:
      ([cond, then, otherwise]) => (row) => (cond!(row) === true ? then!(row) : otherwise!(row)),
  },
];
