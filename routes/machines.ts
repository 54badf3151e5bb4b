/**
 * `GET /machines`: the definitions of the state machines the server runs, as XState's
 * `machine.toJSON()` gives them (the same machine objects, not a copy), for clients that draw
 * them; and the supervisor's live numbers. A query's own state comes from its status and its
 * events stream.
 */

import { Hono } from "hono";
import { MACHINES } from "../actors/statecharts.ts";
import type { SupervisorRef } from "../actors/supervisor.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export function machineRoutes(supervisor: SupervisorRef | undefined): Hono<AppEnv> {
  const definitions = Object.fromEntries(
    Object.entries(MACHINES).map(([name, machine]) => [name, machine.toJSON()]),
  );
  return new Hono<AppEnv>().get("/machines", (c) => {
    const snapshot = supervisor?.getSnapshot();
    const live = snapshot && {
      supervisor: {
        state: snapshot.value,
        held: snapshot.context.queries.size,
        waiting: snapshot.context.waiting.length,
        active: snapshot.context.active.size,
        maxRunning: snapshot.context.maxRunning,
        maxQueued: snapshot.context.maxQueued,
      },
    };
    return sendJson(c, { machines: definitions, live: live ?? {} });
  });
}
