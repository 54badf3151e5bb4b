/** `GET /API/v1.0/whoami`: the caller as the token identifies them. */

import { Hono } from "hono";
import type { Settings } from "../home/settings.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export function whoamiRoutes(deps: { settings: Settings }): Hono<AppEnv> {
  return new Hono<AppEnv>().get("/whoami", (c) => {
    const { name, groups, admin, timeZone } = c.get("user");
    return sendJson(c, {
      name,
      groups,
      admin,
      // The zone the user's timestamps are shown in: their own, else the server's.
      timeZone: timeZone ?? deps.settings["server.timeZone"],
    });
  });
}
