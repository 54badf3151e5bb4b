/**
 * Functions generated from text (a pattern's byte scanner, a row builder, a result's byte
 * writer), made once per text and reused. `new Function` for each query would give V8 a fresh
 * function every time, which starts cold: interpreted, then compiled again after enough calls.
 * A factory kept here is the same function object on the next query, and the closures it makes
 * share their feedback and optimized code, so a query repeated (a dashboard, a scheduled check)
 * starts hot. (The access bench, 2 workers, 5 queries on one server, two pairs alternated:
 * medians 516 and 589 ms with it, 586 and 670 without; most of a worker's warm-up, 800 ms for
 * its first query and 480 for its fourth, is the engine's own code.)
 *
 *   const make = generatedFunction(["state", "keep"], source);
 *   const scan = make(state, keep);
 */

/** Factories kept per thread; the least recently used goes beyond this. */
export const MAX_KEPT = 256;

const kept = new Map<string, (...args: never[]) => unknown>();

// deno-lint-ignore no-explicit-any
export function generatedFunction<T extends (...args: any[]) => any>(
  params: readonly string[],
  body: string,
): T {
  const key = `${params.join(",")}\n${body}`;
  let made = kept.get(key);
  if (made !== undefined) {
    kept.delete(key); // to the end: most recently used
  } else {
    made = new Function(...params, body) as (...args: never[]) => unknown;
    if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
  }
  kept.set(key, made);
  return made as unknown as T;
}
