/**
 * Failures of the file system that are the machine's or the user's, not bugs: a full disk, a
 * quota, a name the file system refuses. They become a QueryError saying so; anything else is
 * returned as it was (and reported as a bug where it ends).
 *
 *   catch (e) { throw storageError(e, `saving the table '${canonical}'`); }
 */

import { QueryError } from "../front/diagnostics.ts";

const MESSAGES: Readonly<Record<string, (doing: string) => string>> = {
  ENOSPC: (doing) => `no space left on the device while ${doing}; free some space or write less`,
  EDQUOT: (doing) => `the disk quota is exhausted while ${doing}; free some space or write less`,
  ENAMETOOLONG: (doing) =>
    `the file system refuses the name as too long while ${doing}; choose a shorter name`,
  EROFS: (doing) => `the file system is read-only while ${doing}`,
};

/** The QueryError for a known file-system failure `e` that happened while `doing`, else `e`. */
export function storageError(e: unknown, doing: string): unknown {
  if (e instanceof QueryError || !(e instanceof Error)) return e;
  const code = (e as { code?: unknown }).code;
  const message = typeof code === "string" ? MESSAGES[code] : undefined;
  if (message === undefined) return e;
  return new QueryError({ code: "RUNTIME_ERROR", message: message(doing) });
}
