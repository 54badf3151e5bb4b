/**
 * How long a running query has left, from its progress (the share of its input consumed: bytes
 * of the files it reads, hours of cloud logs it fetches; see engine/plan/context.ts's
 * ProgressMeter) and the time it has run: `elapsed × (1 − p) / p`. Absent, never a made-up
 * number, when the input's size is not known (the progress is still 0), once finished, or
 * before any time has passed.
 *
 * @example etaMillis(0.25, 3000) // 9000
 */

/** Below this share the estimate is noise (the first file's open, a plan's preparation). */
const MIN_PROGRESS = 0.01;

export function etaMillis(progress: number, elapsedMillis: number): number | undefined {
  if (!(progress >= MIN_PROGRESS) || progress >= 1 || !(elapsedMillis > 0)) return undefined;
  return Math.round(elapsedMillis * (1 - progress) / progress);
}
