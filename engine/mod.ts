/**
 * The engine's one door: everything `routes/` and `actors/` use of the engine, re-exported from
 * where it lives (`deno task layers` refuses their imports of any other engine file). A name
 * comes here when a route or an actor needs it; what it is and where it lives is in the module
 * it comes from (engine/README.md tells the sub-folders apart).
 *
 * - Queries: `compile`, `execute`, `plannedSchema` (engine.ts), and the context they take.
 * - Editors: `languageWords`, `tryPattern` (language.ts).
 * - Scan workers: the contract (contracts/scan_workers.ts) and a worker's side (`runShare`).
 * - Results: values, types and schemas, diagnostics, the row writers and rendered rows.
 * - The contracts others implement: storage, resource tree, datastore registry, user.
 */

export {
  type DatastoreRegistry,
  DATASTORES_FOLDER,
  definitionRefusal,
  isDatastoreDefinition,
  type Warning,
} from "./contracts/datastore.ts";
export type { QueryContext } from "./contracts/query_context.ts";
export { isWithin, PathError } from "./contracts/resource_path.ts";
export {
  type Preconditions,
  type ResolvedPath,
  ResourceConflict,
  type ResourceTree,
  type Right,
} from "./contracts/resource_tree.ts";
export type {
  ScanWorkers,
  ShareHandle,
  ShareMessage,
  ShareTask,
} from "./contracts/scan_workers.ts";
export { ROW_CREDIT } from "./contracts/scan_workers.ts";
export type { ColumnCacheConfig } from "./contracts/column_cache.ts";
export type { ScriptSource } from "./contracts/script_source.ts";
export {
  type CommitEntry,
  MAX_COMMIT_KEYS,
  type Storage,
  type StorageCoordination,
  StorageError,
  type StorageKey,
  type StoredValue,
} from "./contracts/storage.ts";
export type { User } from "./contracts/user.ts";
export { compile, execute, type Plan, plannedSchema } from "./engine.ts";
export { type LanguageWords, languageWords, type PatternTrial, tryPattern } from "./language.ts";
export { RowCredits, runShare } from "./share_run.ts";
export type { QueryRun } from "./exec/query_run.ts";
export {
  ByteSink,
  compileRowBytesWriter,
  compileRowTextWriter,
  headerText,
  type RowBytesWriter,
  type RowTextFormat,
} from "./render/render_bytes.ts";
export {
  frameText,
  RenderedRows,
  type RenderRequest,
  type RowFrame,
  sameFrame,
} from "./render/rendered.ts";
export { type Diagnostic, formatDiagnostic, QueryError } from "./front/diagnostics.ts";
export { newQueryStats, type QueryStats, TimeSlicer } from "./plan/context.ts";
export { storageError } from "./table/storage_error.ts";
export { decodeParsedRow, decodeValue, encodeRowObject, encodeValue } from "./table/sxt_values.ts";
export { type RenderOptions, toText } from "./render/render.ts";
export { isValidZone } from "./values/time.ts";
export { formatLocal } from "./values/time_format.ts";
export { checkTimePattern } from "./values/time_pattern.ts";
export {
  type Field,
  scalar,
  type Schema,
  schemaFromJson,
  schemaToJson,
  type Type,
} from "./values/types.ts";
export { Interval, IpAddr, IpNet, type Row, Timestamp, type Value } from "./values/values.ts";
export { sleep } from "./util/sleep.ts";
