/** Paths a script names (tables, views, save targets): resolved, with rights checked. */

import type { Span } from "../ast.ts";
import { PathError, type ResolvedPath, type Right } from "../home/resource_tree.ts";
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
 * An existing file the user has `right` on, with its real host path; otherwise a diagnostic
 * (FORBIDDEN before NOT_FOUND, so that a missing right does not tell whether the file exists).
 */
export async function existingFile(
  env: PlanEnv,
  path: string,
  options: { right: Right; what: string; span?: Span },
): Promise<{ canonical: string; real: string } | undefined> {
  const resolved = resolvePath(env, path, options.span);
  if (!resolved) return undefined;
  const { canonical } = resolved;
  if (!env.query.tree.may(env.query.user, options.right, canonical)) {
    report(
      env,
      "FORBIDDEN",
      `you may not ${options.right} the ${options.what} ${canonical}`,
      options.span,
    );
    return undefined;
  }
  try {
    const real = await env.query.tree.realPath(resolved);
    const info = await Deno.stat(real);
    if (!info.isFile) throw new Deno.errors.NotFound();
    return { canonical, real };
  } catch (e) {
    if (e instanceof PathError) {
      report(env, "NOT_FOUND", e.message, options.span);
    } else if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
      report(env, "NOT_FOUND", `the ${options.what} ${canonical} does not exist`, options.span);
    } else {
      report(
        env,
        "NOT_FOUND",
        `the ${options.what} ${canonical} cannot be read: ${(e as Error).message}`,
        options.span,
      );
    }
    return undefined;
  }
}
