/**
 * The definition of a FILE datastore, `/system/datastores/<store>.json`:
 *
 *   {"type": "FILE", "fileStore": {"root": "/var/log/web",
 *     "acl": {"users": {"bob": ["read"]}, "groups": {"ops": ["read", "list"]}}}}
 *
 * `root` is an absolute host folder; `acl` (connectors/store_acl.ts, placed as in CLOUDAPI
 * stores) says who may read through the store (`read`) and use globs in it (`list`); without
 * it only admins may. See docs/datastores.md.
 */

import { isAbsolute } from "node:path";
import { z } from "zod";
import { type StoreAcl, storeAclSchema } from "../store_acl.ts";
import type { DiagnosticCode } from "../../engine/front/diagnostics.ts";

export interface FileStoreDefinition {
  readonly name: string;
  /** Absolute host folder the store's paths are under. */
  readonly root: string;
  readonly acl?: StoreAcl | undefined;
}

const definitionSchema = z.object({
  type: z.literal("FILE"),
  fileStore: z.object({ root: z.string(), acl: storeAclSchema.optional() }).strict(),
}).strict();

export type FileStoreResult =
  | { readonly ok: true; readonly definition: FileStoreDefinition }
  | {
    readonly ok: false;
    readonly problem: string;
    /** The diagnostic code a query that uses the store fails with. */
    readonly code: Extract<DiagnosticCode, "BAD_DATASTORE">;
  };

/** Validates the parsed definition file of the FILE store `name`. */
export function parseFileStoreDefinition(name: string, json: unknown): FileStoreResult {
  const where = `datastore '${name}'`;
  const type = (json as { type?: unknown } | null)?.type;
  if (type !== "FILE") {
    return {
      ok: false,
      code: "BAD_DATASTORE",
      problem: `${where} is of type ${JSON.stringify(type)}, not FILE`,
    };
  }
  const parsed = definitionSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join(".") || "(top level)";
    const extra = issue.code === "unrecognized_keys"
      ? `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}`
      : issue.message;
    return {
      ok: false,
      code: "BAD_DATASTORE",
      problem: `${where}: key '${key}': ${extra}; expected {"type": "FILE", "fileStore": ` +
        `{"root": "<absolute folder>", "acl": {"users": {...}, "groups": {...}}}}`,
    };
  }
  const { root, acl } = parsed.data.fileStore;
  if (!isAbsolute(root)) {
    return {
      ok: false,
      code: "BAD_DATASTORE",
      problem: `FILE datastore '${name}' needs "fileStore": {"root": "<absolute folder>"}, ` +
        `not ${JSON.stringify(root)}`,
    };
  }
  return { ok: true, definition: { name, root, acl } };
}
