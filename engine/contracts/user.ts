/** Who runs a query: the engine checks rights and picks time zones by it. */

export interface User {
  readonly name: string;
  readonly groups: readonly string[];
  readonly admin: boolean;
  /** IANA time zone from the user's properties, or undefined for the server's. */
  readonly timeZone?: string | undefined;
}
