/**
 * Mistakes of users are data: a diagnostic names the problem and where it is. The API turns a
 * list of them into one error body (routes/errors.ts); a bare Error means a bug.
 */

export type DiagnosticCode =
  | "SYNTAX_ERROR" // the text does not parse
  | "UNKNOWN_NAME" // unknown command, function, $name or @name
  | "ARITY" // wrong number of arguments
  | "TYPE_ERROR" // a type clash found before or during execution
  | "BAD_ARGUMENT" // a view argument missing, unknown or not a literal of its type
  | "NO_RESULT" // a script without a pipeline
  | "RECURSION" // a view that calls itself
  | "NOT_FOUND" // a stored script or table that does not exist or cannot be seen
  | "FORBIDDEN" // the user lacks the right on a path
  | "CORRUPT_TABLE" // a stored table whose bytes are not a whole table (torn, edited, not one)
  | "LICENSE_REQUIRED"
  | "BAD_DATASTORE" // a datastore definition that is wrong (a key, a value, the credentials)
  | "MEMORY_LIMIT"
  | "WARNING" // a query run with opt.failOnWarning=true gave a WARN or ERROR warning
  | "RUNTIME_ERROR";

export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly message: string;
  /** 1-based line and column of where the problem starts in the script, when it has one. */
  readonly line?: number;
  readonly column?: number;
  /** The stored script the position refers to, when it is not the submitted one. */
  readonly script?: string;
}

/** The message with its place in front, as the API and the CLI print it. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.line !== undefined ? `line ${d.line}, column ${d.column}: ` : "";
  const script = d.script ? `${d.script}: ` : "";
  return `${script}${where}${d.message}`;
}

/**
 * A failure of a running query that the user caused or must know about (a type clash, the
 * memory budget, a file that became unreadable). It carries a diagnostic; the query ends FAILED
 * with that message.
 */
export class QueryError extends Error {
  constructor(readonly diagnostic: Diagnostic) {
    super(formatDiagnostic(diagnostic));
    this.name = "QueryError";
  }
}

/** Levenshtein distance, for "did you mean". */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** ` (did you mean 'count'?)` for the closest candidate within reach, else the empty string. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  let best = "";
  let bestDistance = Infinity;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const reach = Math.max(1, Math.floor(name.length / 3));
  return bestDistance <= reach ? ` (did you mean '${best}'?)` : "";
}
