/** The Hono environment every part of the API shares: what middleware puts on the context. */

import type { User } from "../engine/mod.ts";

export type AppEnv = {
  Variables: {
    /** The authenticated caller; set by the auth middleware on everything under /API/v1.0. */
    user: User;
  };
};
