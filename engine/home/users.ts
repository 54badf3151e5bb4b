/**
 * Users of the service. CONTRACT STUB: the foundation work completes this module (the store in
 * conf/users.json, tokens stored as hashes). The `User` shape is fixed.
 */

export interface User {
  readonly name: string;
  readonly groups: readonly string[];
  readonly admin: boolean;
  /** IANA time zone from the user's properties, or undefined for the server's. */
  readonly timeZone?: string;
}
