import assert from "node:assert/strict";
import { sleep } from "./sleep.ts";

Deno.test("sleep() resolves after its time, and leaves no listener on the signal", async () => {
  const controller = new AbortController();
  let added = 0;
  let removed = 0;
  const signal = controller.signal;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<typeof add>) => (added++, add(...args));
  signal.removeEventListener = (...args: Parameters<typeof remove>) => (removed++, remove(...args));
  await sleep(1, signal);
  assert.equal(added, 1);
  assert.equal(removed, 1);
  await sleep(0);
});

Deno.test("sleep() rejects with the signal's reason when it aborts, before or during the wait", async () => {
  const early = AbortSignal.abort(new Error("stopped before"));
  await assert.rejects(sleep(60_000, early), /stopped before/);
  const controller = new AbortController();
  const waiting = sleep(60_000, controller.signal);
  controller.abort(new Error("stopped during"));
  await assert.rejects(waiting, /stopped during/);
});
