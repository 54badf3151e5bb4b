/**
 * The limits of one query, as one object: built from the settings where a query is submitted
 * (routes/query_request.ts), carried by its context (QueryContext), its plan (CompiledPlan) and
 * each worker's task (ShareTask), and read where they bind. A new limit is one field here, one
 * line where the settings become limits, and the place that enforces it.
 */
export interface EngineLimits {
  /** Bytes the group and sort state of one query may take (query.memoryLimit). */
  readonly memoryLimit: number;
  /**
   * Bytes of script text one query may compile, its own and every stored script it calls
   * together (query.maxScriptBytes): the front end runs in the server's thread, in one go per
   * script. Absent: no bound (a scan worker planning again what the server already planned).
   */
  readonly maxScriptBytes?: number;
}

/**
 * The limits of one of `shares` workers that run a query's scan together: the memory divided
 * among them; the script bound left out (the server planned the script within it).
 */
export function shareLimits(limits: EngineLimits, shares: number): EngineLimits {
  return { memoryLimit: Math.floor(limits.memoryLimit / Math.max(1, shares)) };
}
