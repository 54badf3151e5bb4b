/**
 * A process serving "ok" behind serveGuarded with more connections allowed than it has file
 * descriptors (run it under a low `ulimit -n`): connections_test.ts shows that running out of
 * descriptors on accept does not end it. Prints `port <n>` once listening.
 */

import { createLogger } from "../../home/log.ts";
import { serveGuarded } from "../../routes/guarded_server.ts";

const server = await serveGuarded(() => new Response("ok"), {
  hostname: "127.0.0.1",
  port: 0,
  maxConnections: 100_000,
  headersTimeoutMs: 60_000,
  bodyTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  // deno-lint-ignore no-console
  log: createLogger((line) => console.error(line)),
});
// deno-lint-ignore no-console
console.log(`port ${server.addr.port}`);
await server.finished;
