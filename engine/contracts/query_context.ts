/** What a query runs as and against: its user, folder, zone, arguments, datastores and tree. */

import type { User } from "./user.ts";
import type { ResourceTree } from "./resource_tree.ts";
import type { DatastoreRegistry } from "./datastore.ts";
import type { ScanWorkers } from "./scan_workers.ts";
import type { EngineLimits } from "./engine_limits.ts";
import type { ColumnCacheConfig } from "./column_cache.ts";

export interface QueryContext {
  readonly user: User;
  /** Virtual path relative paths resolve against (the request's scriptPath, or the script's folder). */
  readonly workDir: string;
  /** IANA zone for timestamps without a zone. */
  readonly timeZone: string;
  /** View arguments as given in the query string (strings, parsed by their declared type). */
  /**
   * Checking a script, not running it (`POST /check`): the script's own missing mandatory
   * arguments take stand-in values (engine/planning/views.ts), so that the rest is checked.
   */
  readonly checking?: boolean;
  readonly args: Readonly<Record<string, string>>;
  readonly datastores: DatastoreRegistry;
  /** Resolution and rights for every path the script names (tables, views, save). */
  readonly tree: ResourceTree;
  /** The query's limits (memory, script size), handed on to its plan and its workers. */
  readonly limits: EngineLimits;
  /** Workers the query's scans may run on (query.workers); absent: all in this thread. */
  readonly scanWorkers?: ScanWorkers;
  /** The column cache (setting `cache.enabled`); absent: sources read the files only. */
  readonly columnCache?: ColumnCacheConfig;
}
