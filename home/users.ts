/** Names of users and groups. The store (conf/users.json) is in user_store.ts. */

/**
 * User and group names: letters, digits, `_`, `.`, `-`; 1 to 64 of them; not ending in `.`
 * (the resource tree refuses path segments that do, so such a user could not reach its folder).
 */
export const NAME_PATTERN = /^[A-Za-z0-9_.-]{0,63}[A-Za-z0-9_-]$/;

/** Is `name` usable as a user or group name (and so as a folder name under /users)? */
export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name) && name !== "." && name !== "..";
}
