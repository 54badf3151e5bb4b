/**
 * `save(path)`: the target must be a `.sxt` path the user may `write` (when it exists) or
 * `create` in (its folder, when it does not). Checked at compile time. A path the user may not
 * see (neither list nor read) is NOT_FOUND whether it exists or not, unless they may write it.
 */

import { dirname } from "node:path";
import type { Expr, Span } from "../front/ast.ts";
import { PathError } from "../contracts/resource_path.ts";
import type { PlanNode } from "../plan/plan.ts";
import { definitionRefusal, isDatastoreDefinition } from "../contracts/datastore.ts";
import { type PlanEnv, report } from "./env.ts";
import { constantString } from "./expressions.ts";
import { resolvePath } from "./paths.ts";

export async function planSave(
  env: PlanEnv,
  input: PlanNode,
  save: { path: Expr; span: Span },
): Promise<PlanNode | undefined> {
  const path = constantString(env, save.path, "the path of save");
  if (path === undefined) return undefined;
  const resolved = resolvePath(env, path, save.path.span);
  if (!resolved) return undefined;
  const { canonical } = resolved;
  if (isDatastoreDefinition(canonical)) {
    report(env, "FORBIDDEN", definitionRefusal(canonical, "queries"), save.path.span);
    return undefined;
  }
  if (!canonical.endsWith(".sxt")) {
    report(
      env,
      "BAD_ARGUMENT",
      `save writes stored tables: '${path}' must end in .sxt`,
      save.path.span,
    );
    return undefined;
  }
  const { tree, user } = env.query;
  try {
    // A symbolic link counts as there (even a dangling one): realPath then decides.
    const there = (await tree.stat(resolved.real, { followLinks: false })) !== null;
    const visible = tree.may(user, "list", canonical) || tree.may(user, "read", canonical);
    if (!visible && !(there && tree.may(user, "write", canonical))) {
      // A path the user may not see answers as a read of it does, whether it is there or not.
      report(env, "NOT_FOUND", `no such resource: ${canonical}`, save.path.span);
      return undefined;
    }
    if (there) {
      if (!tree.may(user, "write", canonical)) {
        report(env, "FORBIDDEN", `you may not write ${canonical}`, save.path.span);
        return undefined;
      }
      // The right must also hold where a symlink really leads (no overwriting through a link).
      const real = await tree.realPath(resolved, "write");
      env.saved?.set(canonical, { schema: input.schema, real });
      return { kind: "save", schema: input.schema, input, canonical, real, files: tree };
    }
    const folder = dirname(canonical);
    if (!tree.may(user, "create", folder)) {
      report(env, "FORBIDDEN", `you may not create files in ${folder}`, save.path.span);
      return undefined;
    }
    const folderReal = await tree.realPath(tree.resolve(user, folder), "create");
    const real = tree.child(folderReal, canonical.slice(canonical.lastIndexOf("/") + 1));
    env.saved?.set(canonical, { schema: input.schema, real });
    return { kind: "save", schema: input.schema, input, canonical, real, files: tree };
  } catch (e) {
    if (e instanceof PathError) {
      report(env, "NOT_FOUND", e.message, save.path.span);
    } else if (e instanceof Deno.errors.NotFound) {
      report(env, "NOT_FOUND", `the folder ${dirname(canonical)} does not exist`, save.path.span);
    } else throw e;
    return undefined;
  }
}
