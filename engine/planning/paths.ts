/** Paths a script names (tables, views, save targets): resolved, with rights checked. */

import { dirname } from "node:path";
import type { Span } from "../front/ast.ts";
import { PathError } from "../contracts/resource_path.ts";
import { type ResolvedPath, type Right, type TreeFiles } from "../contracts/resource_tree.ts";
import { definitionRefusal, isDatastoreDefinition } from "../contracts/datastore.ts";
import { type PlanEnv, report } from "./env.ts";

/** Resolves `path` for the query's user; a malformed path becomes a diagnostic. */
export function resolvePath(env: PlanEnv, path: string, span?: Span): ResolvedPath | undefined {
  try {
    return env.query.tree.resolve(env.query.user, path, env.workDir);
  } catch (e) {
    if (!(e instanceof PathError)) throw e;
    report(env, "NOT_FOUND", e.message, span);
    return undefined;
  }
}

/**
 * An existing file the user has `right` on (every one of them, when a list), with its location
 * and the tree's file operations to read it there; otherwise a diagnostic. The rights are checked before existence, so that a refusal
 * does not tell whether the file exists: NOT_FOUND when the user may not even list its folder
 * (another user's folder: as if it were not there), FORBIDDEN when they may see it but not use it.
 */
export async function existingFile(
  env: PlanEnv,
  path: string,
  options: { right: Right | readonly Right[]; what: string; span?: Span },
): Promise<{ canonical: string; real: string; files: TreeFiles } | undefined> {
  const resolved = resolvePath(env, path, options.span);
  if (!resolved) return undefined;
  const { canonical } = resolved;
  if (isDatastoreDefinition(canonical)) {
    report(env, "FORBIDDEN", definitionRefusal(canonical, "queries"), options.span);
    return undefined;
  }
  const { tree, user } = env.query;
  const rights: readonly Right[] = typeof options.right === "string"
    ? [options.right]
    : options.right;
  if (!rights.every((right) => tree.may(user, right, canonical))) {
    const visible = tree.may(user, "list", dirname(canonical));
    report(
      env,
      visible ? "FORBIDDEN" : "NOT_FOUND",
      visible
        ? rights.length === 1
          ? `you may not ${rights[0]} the ${options.what} ${canonical}`
          : `you need the ${rights.join(" and ")} rights on the ${options.what} ${canonical}`
        : `the ${options.what} ${canonical} does not exist`,
      options.span,
    );
    return undefined;
  }
  try {
    const real = await tree.realPath(resolved);
    const info = await tree.stat(real);
    if (!info || info.isFolder) throw new Deno.errors.NotFound();
    return { canonical, real, files: tree };
  } catch (e) {
    if (e instanceof PathError) {
      report(env, "NOT_FOUND", e.message, options.span);
    } else if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
      report(env, "NOT_FOUND", `the ${options.what} ${canonical} does not exist`, options.span);
    } else {
      // The system's message would name host paths: say only what the user can act on.
      report(env, "NOT_FOUND", `the ${options.what} ${canonical} cannot be read`, options.span);
    }
    return undefined;
  }
}
