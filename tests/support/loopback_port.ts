/**
 * Ports on loopback for the servers the tests start themselves (Azurite, PostgreSQL): a free one
 * to give a server, then a wait until it listens there.
 *
 *   const port = freePort();
 *   const child = new Deno.Command("node", { args: [...] }).spawn();
 *   await waitForPort(port, { name: "Azurite", exited: child.status, log, every: 100 });
 */

import { sleep } from "../../engine/util/sleep.ts";

/** A port free on 127.0.0.1 a moment ago. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * Resolves once something listens on 127.0.0.1:`port`, tried `every` ms for 300 s; an error
 * naming the server (with its `log`) if it ends first or does not listen by then. The bound is for
 * a server that never listens, not a measure: Azurite took over 60 s to listen at load 35.
 */
export async function waitForPort(
  port: number,
  server: {
    readonly name: string;
    readonly exited: Promise<Deno.CommandStatus>;
    readonly log: Promise<string>;
    readonly every: number;
  },
): Promise<void> {
  let ended = false;
  server.exited.then(() => ended = true);
  const until = Date.now() + 300_000;
  while (Date.now() < until) {
    if (ended) throw new Error(`${server.name} ended at start: ${await server.log}`);
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await sleep(server.every);
    }
  }
  throw new Error(`${server.name} did not listen on port ${port} within 300 s`);
}
