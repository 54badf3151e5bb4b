/**
 * A FILE datastore: `file://<store>/<path>` reads files under a root folder of this host that
 * an admin named in `/system/datastores/<store>.json`. Every user of the service may read
 * through it; symbolic links may not lead out of the root.
 */

import { relative, resolve, sep } from "node:path";
import type { Datastore, ListOptions } from "../datastore.ts";
import { QueryError } from "../../engine/diagnostics.ts";
import { compileGlob } from "./glob.ts";
import { listLocalFiles, type LocalRoot } from "./local_files.ts";

/** The store for `file://<name>/...` over the host folder `rootDir`. */
export function hostStore(name: string, rootDir: string): Datastore {
  const prefix = `file://${name}`;
  const root = resolve(rootDir);
  let realRoot: Promise<string> | undefined;
  return {
    list(pattern: string, options: ListOptions) {
      // The path inside the store; `..` segments are refused, not resolved.
      const inner = pattern.startsWith(prefix) ? pattern.slice(prefix.length) : pattern;
      const glob = compileGlob("/" + inner.replace(/^\/+/, ""));
      const local: LocalRoot = {
        hostPath: (path) => root + path.split("/").join(sep),
        uriOf: (path) => prefix + path,
        mayList: (path) => !hasDotDot(path),
        mayRead: (path) => !hasDotDot(path),
        async realPath(path) {
          realRoot ??= Deno.realPath(root);
          const host = await Deno.realPath(root + path.split("/").join(sep));
          const rel = relative(await realRoot, host);
          if (rel.startsWith("..") || resolve(await realRoot, rel) !== host) {
            throw new Error(`'${prefix}${path}' leads out of the datastore '${name}'`);
          }
          return { host, logical: "/" + rel.split(sep).join("/") };
        },
      };
      if (hasDotDot(glob.base)) {
        throw new QueryError({
          code: "FORBIDDEN",
          message: `'${pattern}' may not contain '.' or '..' segments`,
        });
      }
      return listLocalFiles(glob, local, options);
    },
  };
}

function hasDotDot(path: string): boolean {
  return path.split("/").some((s) => s === ".." || s === ".");
}
