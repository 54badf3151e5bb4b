/** What a query runs as and against: its user, folder, zone, arguments, datastores and tree. */

import type { User } from "./user.ts";
import type { ResourceTree } from "./resource_tree.ts";
import type { DatastoreRegistry } from "./datastore.ts";

export interface QueryContext {
  readonly user: User;
  /** Virtual path relative paths resolve against (the request's scriptPath, or the script's folder). */
  readonly workDir: string;
  /** IANA zone for timestamps without a zone. */
  readonly timeZone: string;
  /** View arguments as given in the query string (strings, parsed by their declared type). */
  readonly args: Readonly<Record<string, string>>;
  readonly datastores: DatastoreRegistry;
  /** Resolution and rights for every path the script names (tables, views, save). */
  readonly tree: ResourceTree;
  /** Bytes the group and sort state of one query may take (query.memoryLimit). */
  readonly memoryLimit: number;
}

/**
 * What to run: a script text, a stored script (view) by virtual path, or the rows of a stored
 * table by virtual path (as `@[path]` would read them, with the path taken as data, never as text).
 */
export type ScriptSource =
  | { readonly text: string }
  | { readonly path: string }
  | { readonly table: string };
