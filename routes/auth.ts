/**
 * Authentication of everything under /API/v1.0: `Authorization: Bearer <token>`. The token
 * is looked up in the user store (which sees CLI changes without a restart); the caller is put
 * on the context as `c.get("user")`.
 */

import { createMiddleware } from "hono/factory";
import type { UserStore } from "../home/user_store.ts";
import type { AppEnv } from "./env.ts";
import { unauthenticated } from "./errors.ts";

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Middleware that refuses requests without a known token with 401 `UNAUTHENTICATED`. */
export function requireUser(users: Pick<UserStore, "authenticate">) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("Authorization");
    if (header === undefined) {
      throw unauthenticated("missing header 'Authorization: Bearer <token>'");
    }
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) {
      throw unauthenticated("the Authorization header must have the form 'Bearer <token>'", true);
    }
    const user = await users.authenticate(token);
    if (user === undefined) throw unauthenticated("unknown or revoked token", true);
    c.set("user", user);
    await next();
  });
}
