/**
 * Who may use a datastore an admin defined in `/system/datastores/<store>.json`: its `acl` key,
 * the same for every kind (FILE, CLOUDAPI, AZBLOB).
 *
 *   "acl": { "users": { "bob": ["read"] }, "groups": { "sec": ["read", "list"] } }
 *
 * Without an `acl` only admins may use the store; admins always may.
 */

import { z } from "zod";
import { QueryError } from "../engine/front/diagnostics.ts";
import type { User } from "../engine/contracts/user.ts";

export type StoreRight = "list" | "execute" | "read" | "write" | "create";

export interface StoreAcl {
  readonly users: Readonly<Record<string, readonly StoreRight[]>>;
  readonly groups: Readonly<Record<string, readonly StoreRight[]>>;
}

const STORE_RIGHTS = ["list", "execute", "read", "write", "create"] as const;
const rights = z.array(z.enum(STORE_RIGHTS));

/** The schema of the `acl` key of a datastore definition. */
export const storeAclSchema = z.object({
  users: z.record(z.string(), rights).default({}),
  groups: z.record(z.string(), rights).default({}),
}).strict();

/**
 * May `user` do `right` through a store with this acl?
 *
 * @example storeAllows(def.acl, bob, "read")
 */
export function storeAllows(acl: StoreAcl | undefined, user: User, right: StoreRight): boolean {
  if (user.admin) return true;
  if (!acl) return false;
  if (Object.hasOwn(acl.users, user.name) && acl.users[user.name]!.includes(right)) return true;
  return user.groups.some((g) => Object.hasOwn(acl.groups, g) && acl.groups[g]!.includes(right));
}

/**
 * The acl of a parsed definition file (`json[storeKey].acl`), read on its own so that it can be
 * checked before anything else of the definition is looked at: a user outside it learns nothing
 * of the definition's problems. An acl that does not parse is none (only admins may).
 *
 * @example definitionAcl(json, "cloudapiStore")
 */
export function definitionAcl(json: unknown, storeKey: string): StoreAcl | undefined {
  const store = json !== null && typeof json === "object"
    ? (json as Record<string, unknown>)[storeKey]
    : undefined;
  const acl = store !== null && typeof store === "object"
    ? (store as Record<string, unknown>).acl
    : undefined;
  const parsed = storeAclSchema.safeParse(acl);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The answer for a store that does not exist and for one `user` may not read: the same, so
 * that a name outside one's acl tells nothing (as `GET /datastores/<name>` answers 404). Only
 * admins, who may read every store, are told which definition file is missing.
 *
 * @example throw noSuchStore("FILE ", "weblogs", bob);
 */
export function noSuchStore(kind: string, store: string, user: User): QueryError {
  return new QueryError({
    code: "NOT_FOUND",
    message: user.admin
      ? `there is no ${kind}datastore '${store}' (no /system/datastores/${store}.json)`
      : `there is no ${kind}datastore '${store}' that you may read`,
  });
}

/**
 * The parsed definition of `store` (`text`: its file, null when there is none) for `user`, who
 * must be in the acl under `json[storeKey]`; checked before anything else of the definition is
 * looked at, so that a user outside the acl learns nothing of it, not even that it exists:
 * NOT_FOUND without a file and outside the acl alike (noSuchStore). A definition that is not
 * JSON has no acl, so only admins may use it: BAD_DATASTORE for them (never the parser's
 * message: it quotes the text around the mistake, which may be a secret), NOT_FOUND for others.
 *
 * @example const json = readableDefinition("corp", text, "cloudapiStore", user);
 */
export function readableDefinition(
  store: string,
  text: string | null,
  storeKey: string,
  user: User,
): unknown {
  if (text === null) throw noSuchStore("", store, user);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    if (!user.admin) throw noSuchStore("", store, user);
    throw new QueryError({
      code: "BAD_DATASTORE",
      message: `datastore '${store}': /system/datastores/${store}.json is not valid JSON`,
    });
  }
  if (!storeAllows(definitionAcl(json, storeKey), user, "read")) {
    throw noSuchStore("", store, user);
  }
  return json;
}
