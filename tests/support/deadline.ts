/**
 * For test harnesses: waits for `work` at most `ms`, so that a server that does not shut down
 * (a response left open, a stuck handler) fails the test that started it, at once and by
 * name, instead of hanging the whole suite.
 *
 *   await withDeadline(server.shutdown(), 10_000, "the test server's shutdown");
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs every cleanup step even when one fails (a failed shutdown must not leave the emulator
 * or the temp folder behind), then throws the first failure.
 */
export async function cleanUp(steps: readonly (() => unknown)[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
