/**
 * Finds the datastore of a source URI: plain paths are files of the resource tree,
 * `file://<store>/...` a FILE datastore defined in `/system/datastores/<store>.json`
 * (file_store_definition.ts; only admins may write there, see rights.ts), and other schemes
 * whatever was registered for them (`register("cloudapi", factory)`).
 */

import {
  type Datastore,
  type DatastoreRegistry,
  DATASTORES_FOLDER,
} from "../../engine/contracts/datastore.ts";
import { isWithin } from "../../engine/contracts/resource_path.ts";
import type { ResourceTree } from "../../engine/contracts/resource_tree.ts";
import type { User } from "../../engine/contracts/user.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import { definitionAcl, noSuchStore, storeAllows } from "../store_acl.ts";
import { treeStore } from "./tree_store.ts";
import { hostStore } from "./host_store.ts";
import { parseFileStoreDefinition } from "./file_store_definition.ts";

/** Makes the datastore for a URI of a registered scheme; throws QueryError when there is none. */
export type DatastoreFactory = (uri: string, user: User) => Promise<Datastore>;

export interface SchemeRegistry extends DatastoreRegistry {
  /** Serves URIs `<scheme>://...` with `factory`; a later registration replaces an earlier. */
  register(scheme: string, factory: DatastoreFactory): void;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const STORE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * `definitionText`, when given, is where FILE store definitions are read instead of the tree
 * (the server's storage is a KV shared by several servers: engine/contracts/storage.ts). `hiddenHostPaths`
 * are files of this host no FILE store reads or lists, whatever its root (the KV's files, which
 * hold the definitions' credentials); the tree's definitions folder always is.
 */
export function createDatastoreRegistry(
  tree: ResourceTree,
  definitionText?: (store: string) => Promise<string | null>,
  options: { readonly hiddenHostPaths?: readonly string[] } = {},
): SchemeRegistry {
  const factories = new Map<string, DatastoreFactory>();
  const tree_ = treeStore(tree);
  factories.set("file", fileStoreFactory(tree, definitionText, options.hiddenHostPaths));
  return {
    register(scheme, factory) {
      factories.set(scheme.toLowerCase(), factory);
    },
    async forUri(uri, user) {
      const scheme = SCHEME.exec(uri)?.[1];
      if (scheme === undefined) return tree_;
      const factory = factories.get(scheme.toLowerCase());
      if (!factory) {
        throw new QueryError({
          code: "NOT_FOUND",
          message: `unknown datastore scheme '${scheme}' in '${uri}' (known: ${
            [...factories.keys()].sort().join(", ")
          })`,
        });
      }
      return await factory(uri, user);
    },
  };
}

/**
 * The factory of `file://<store>/...` URIs (connectors/file/file_kind.ts registers it too):
 * `hiddenHostPaths` are files of this host no FILE store reads or lists, whatever its root.
 */
export function fileStoreFactory(
  tree: ResourceTree,
  definitionText?: (store: string) => Promise<string | null>,
  hiddenHostPaths: readonly string[] = [],
): DatastoreFactory {
  let hidden: Promise<string[]> | undefined;
  return async (uri, user) => {
    hidden ??= withRealPaths(hiddenHostPaths);
    return await fileDatastore(tree, uri, user, { definitionText, hidden: await hidden });
  };
}

async function fileDatastore(
  tree: ResourceTree,
  uri: string,
  user: User,
  options: {
    readonly definitionText: ((store: string) => Promise<string | null>) | undefined;
    readonly hidden: readonly string[];
  },
): Promise<Datastore> {
  const { definitionText } = options;
  const name = uri.slice("file://".length).split("/")[0] ?? "";
  if (!STORE_NAME.test(name)) {
    throw new QueryError({
      code: "NOT_FOUND",
      message: `'${uri}' names no datastore: expected file://<store>/<path>`,
    });
  }
  const definition = `${DATASTORES_FOLDER}/${name}.json`;
  let json: unknown;
  try {
    if (definitionText !== undefined) {
      const text = await definitionText(name);
      if (text === null) throw new Deno.errors.NotFound();
      json = JSON.parse(text);
    } else {
      // Read where the definition really is: a link may not pass off another file as one.
      const target = await tree.realTarget(tree.resolve(user, definition));
      if (!isWithin(target.canonical, DATASTORES_FOLDER)) throw new Deno.errors.NotFound();
      json = JSON.parse(new TextDecoder().decode((await tree.read(target.real)).bytes));
    }
  } catch (e) {
    // Not JSON: no acl can be read from it, so only admins may use it (and hear why not).
    if (e instanceof SyntaxError && user.admin) {
      throw new QueryError({
        code: "BAD_DATASTORE",
        message: `the FILE datastore '${name}' cannot be used: ${definition} is not valid JSON`,
      });
    }
    throw noSuchStore("FILE ", name, user);
  }
  // The acl first: a user outside it learns nothing of the definition, not even that it exists.
  if (!storeAllows(definitionAcl(json, "fileStore"), user, "read")) {
    throw noSuchStore("FILE ", name, user);
  }
  const parsed = parseFileStoreDefinition(name, json);
  if (!parsed.ok) throw new QueryError({ code: parsed.code, message: parsed.problem });
  // Where the tree's definitions really are on this host, for a store whose root holds them
  // (one rooted at the home): it must not read their credentials either.
  const definitions = tree.hostFiles
    ? await withRealPaths([tree.resolve(user, DATASTORES_FOLDER).real])
    : [];
  return hostStore(parsed.definition, [...definitions, ...options.hidden]);
}

/** `paths` with the real path of each that exists (a link or a folder along the way). */
async function withRealPaths(paths: readonly string[]): Promise<string[]> {
  const out = [...paths];
  for (const path of paths) {
    try {
      out.push(await Deno.realPath(path));
    } catch {
      // Not there (yet): the path as given is all there is to compare.
    }
  }
  return out;
}
