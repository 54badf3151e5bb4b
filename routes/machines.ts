/**
 * `GET /machines`: the definitions of the state machines the server runs, as XState's
 * `machine.toJSON()` gives them (the same machine objects, not a copy), for clients that draw
 * them; and the supervisor's live numbers, and for admins each connector's state, queue and
 * token bucket. A query's own state comes from its status and its
 * events stream.
 */

import { Hono } from "hono";
import { MACHINES } from "../actors/statecharts.ts";
import type { SupervisorRef } from "../actors/supervisor.ts";
import type { ConnectorStatus } from "../actors/connector_pool.ts";
import { supervisorNumbers } from "../actors/supervisor_numbers.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export function machineRoutes(
  supervisor: SupervisorRef | undefined,
  connectors?: { status(): readonly ConnectorStatus[] },
): Hono<AppEnv> {
  const definitions = Object.fromEntries(
    Object.entries(MACHINES).map(([name, machine]) => [name, machine.toJSON()]),
  );
  return new Hono<AppEnv>().get("/machines", (c) => {
    const live = supervisor && { supervisor: supervisorNumbers(supervisor) };
    // Tenants and store names are the admins' business.
    const pool = c.get("user").admin && connectors ? { connectors: connectors.status() } : {};
    return sendJson(c, { machines: definitions, live: { ...live, ...pool } });
  });
}
