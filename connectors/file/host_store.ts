/**
 * A FILE datastore: `file://<store>/<path>` reads files under a root folder of this host that
 * an admin named in `/system/datastores/<store>.json`. Its `acl` says who may read through it
 * (`read`) and walk it with globs (`list`); without one only admins may. Paths are checked as
 * tree paths are (no `..`, encoded traversal, look-alike dots); symbolic links may not lead out
 * of the root, not even from a folder along the way.
 */

import { isAbsolute, relative, resolve, sep } from "node:path";
import type { Datastore, ListOptions } from "../../engine/contracts/datastore.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import { checkAbsolutePath, PathError } from "../../engine/contracts/resource_path.ts";
import { storeAllows } from "../store_acl.ts";
import { compileGlob } from "../glob.ts";
import { listLocalFiles, type LocalRoot } from "./local_files.ts";
import type { FileStoreDefinition } from "./file_store_definition.ts";

const STORE_PREFIX = /^file:\/\/[^/]*/i;

/**
 * The store for `file://<name>/...` over the host folder of the definition. `hiddenFolders`
 * (real host paths) are never listed nor read through it, untold: the home's datastore
 * definitions, for a store whose root holds the home.
 */
export function hostStore(
  definition: FileStoreDefinition,
  hiddenFolders: readonly string[] = [],
): Datastore {
  const { name, acl } = definition;
  const prefix = `file://${name}`;
  const root = resolve(definition.root);
  let realRoot: Promise<string> | undefined;
  return {
    list(pattern: string, options: ListOptions) {
      const inner = pattern.replace(STORE_PREFIX, "");
      checkInner(pattern, inner);
      const glob = compileGlob(inner);
      const user = options.user;
      const isGlob = glob.segments.some((s) => s.kind !== "literal");
      for (const right of isGlob ? ["read", "list"] as const : ["read"] as const) {
        if (!storeAllows(acl, user, right)) {
          throw new QueryError({
            code: "FORBIDDEN",
            message: `user '${user.name}' may not ${right} datastore '${name}' (see its acl)` +
              (right === "list" ? `, which '${pattern}' needs for its globs` : ""),
          });
        }
      }
      const local: LocalRoot = {
        hostPath: (path) => root + path.split("/").join(sep),
        uriOf: (path) => prefix + path,
        mayList: () => storeAllows(acl, user, "list"),
        mayRead: () => storeAllows(acl, user, "read"),
        hidden: ({ host }) =>
          hiddenFolders.some((folder) => host === folder || host.startsWith(folder + sep)),
        async realPath(path) {
          realRoot ??= Deno.realPath(root);
          const host = await Deno.realPath(root + path.split("/").join(sep));
          const rel = relative(await realRoot, host);
          if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
            throw new Error(`'${prefix}${path}' leads out of the datastore '${name}'`);
          }
          return { host, logical: rel === "" ? "/" : "/" + rel.split(sep).join("/") };
        },
      };
      return listLocalFiles(glob, local, options);
    },
  };
}

/** The path part of a `file://` URI must be a clean absolute path, as tree paths are. */
function checkInner(pattern: string, inner: string): void {
  try {
    if (inner === "" || inner === "/") {
      throw new PathError(`'${pattern}' names no file: expected file://<store>/<path>`);
    }
    checkAbsolutePath(inner);
  } catch (e) {
    if (e instanceof PathError) throw new QueryError({ code: "NOT_FOUND", message: e.message });
    throw e;
  }
}
