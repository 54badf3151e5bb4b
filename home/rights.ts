/**
 * Who may do what where. Rights are granted on canonical paths of the resource tree, to a user
 * or a group, in `conf/rights.json`, and hold for everything below the path. On top of the
 * grants, fixed defaults:
 *
 * - admins may do everything;
 * - a user has every right in their own `/users/<name>`;
 * - everyone may list, execute and read `/shared`;
 * - everyone may list and execute `/system`;
 * - everyone may list `/` (which shows only the three roots);
 * - only admins may write or create in `/system/datastores`, whatever the grants say: a
 *   datastore definition opens host folders and cloud tenants (see docs/datastores.md).
 *
 * `may()` is the one place that answers; the rest of the service asks it through
 * `ResourceTree.may`.
 */

import { z } from "zod";
import type { Right } from "../engine/contracts/resource_tree.ts";
import { isValidName } from "./users.ts";
import { isWithin } from "../engine/contracts/resource_path.ts";
import { DATASTORES_FOLDER } from "../engine/contracts/datastore.ts";
import { type User } from "../engine/contracts/user.ts";

export const RIGHTS: readonly Right[] = ["list", "execute", "read", "write", "create"];

export interface Grant {
  /** Canonical path without a trailing slash: `/shared/team`. */
  readonly path: string;
  readonly user?: string | undefined;
  readonly group?: string | undefined;
  readonly rights: readonly Right[];
}

/** A rights file that cannot be used; the message names the file and the entry. */
export class RightsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RightsError";
  }
}

const CANONICAL = /^\/(users|shared|system)(\/[^/]+)*$|^\/$/;

const grantSchema = z.object({
  path: z.string().transform((p) => p.length > 1 ? p.replace(/\/+$/, "") : p).refine(
    (p) => CANONICAL.test(p) && !p.split("/").some((s) => s === "." || s === ".."),
    "expected a canonical path such as '/shared/team' (under /users, /shared or /system)",
  ),
  user: z.string().refine(isValidName, "not a valid user name").optional(),
  group: z.string().refine(isValidName, "not a valid group name").optional(),
  rights: z.array(z.enum(RIGHTS as [Right, ...Right[]])),
}).strict().refine((g) => (g.user === undefined) !== (g.group === undefined), {
  message: "a grant names exactly one of 'user' and 'group'",
});

const rightsFileSchema = z.array(grantSchema);

/** Parses the text of rights.json; `source` names it in messages. Throws RightsError. */
export function parseRights(text: string, source = "rights.json"): Grant[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new RightsError(`${source} is not valid JSON: ${(e as Error).message}`);
  }
  const parsed = rightsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RightsError(`${source}: entry ${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data;
}

const EVERYONE_SHARED: readonly Right[] = ["list", "execute", "read"];
const EVERYONE_SYSTEM: readonly Right[] = ["list", "execute"];

function byDefault(user: User, right: Right, canonical: string): boolean {
  if (user.admin) return true;
  if (isWithin(canonical, `/users/${user.name}`)) return true;
  if (isWithin(canonical, "/shared")) return EVERYONE_SHARED.includes(right);
  if (isWithin(canonical, "/system")) return EVERYONE_SYSTEM.includes(right);
  return canonical === "/" && right === "list";
}

/**
 * May `user` do `right` on the canonical path `canonical`, given the grants?
 *
 * @example may(bob, "read", "/shared/team/a.log", grants)
 */
export function may(
  user: User,
  right: Right,
  canonical: string,
  grants: readonly Grant[],
): boolean {
  if (byDefault(user, right, canonical)) return true;
  if ((right === "write" || right === "create") && isWithin(canonical, DATASTORES_FOLDER)) {
    return false;
  }
  return grants.some((g) =>
    g.rights.includes(right) && isWithin(canonical, g.path) &&
    (g.user !== undefined ? g.user === user.name : user.groups.includes(g.group!))
  );
}
