/**
 * Sigma rules for the routes and the CLI (`routes/` may not import `connectors/`): the field
 * mappings in effect — each default target of connectors/sigma/mapping.ts, replaced by
 * `/system/sigma/<target>.json` when that file exists — and the conversion with them.
 */

import type { ResourceTree, User } from "../engine/mod.ts";
import { type Conversion, convertRules, matchRecords } from "../connectors/sigma/convert.ts";
import { DEFAULT_MAPPINGS, parseMapping, type SigmaMapping } from "../connectors/sigma/mapping.ts";
import { FAMILIES, FAMILY_SPECS } from "../connectors/cloudapi/families.ts";
import { parseLogList } from "../connectors/cloudapi/log_list.ts";

export type { Conversion, SigmaMapping };
export { DEFAULT_MAPPINGS };

/** Where an administrator puts a mapping of their own. */
export const SIGMA_FOLDER = "/system/sigma";

/** A mapping file that is not valid: the message names the file and each problem. */
export class MappingError extends Error {}

const SERVER: User = { name: "(server)", groups: [], admin: true };

/** The mappings in effect, with where each comes from. */
export async function sigmaMappings(
  tree: ResourceTree,
): Promise<{ mapping: SigmaMapping; from: string }[]> {
  const out: { mapping: SigmaMapping; from: string }[] = [];
  for (const builtIn of DEFAULT_MAPPINGS) {
    const path = `${SIGMA_FOLDER}/${builtIn.target}.json`;
    let bytes: Uint8Array | undefined;
    try {
      bytes = (await tree.read(tree.resolve(SERVER, path).real)).bytes;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    if (bytes === undefined) {
      out.push({ mapping: builtIn, from: "built-in" });
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new MappingError(`${path} is not JSON: ${(e as Error).message}`);
    }
    try {
      const mapping = parseMapping(json, path);
      if (mapping.target !== builtIn.target) {
        throw new Error(`${path} names target '${mapping.target}', not '${builtIn.target}'`);
      }
      out.push({ mapping, from: path });
    } catch (e) {
      throw new MappingError((e as Error).message);
    }
  }
  return out;
}

/** A conversion as the API shows it (without the evaluator's predicate). */
export function shown(c: Conversion): Omit<Conversion, "predicate"> {
  const { predicate: _, ...rest } = c;
  return rest;
}

export interface ConvertRequest {
  readonly text: string;
  readonly target?: string | undefined;
  readonly store?: string | undefined;
}

export async function convertSigma(tree: ResourceTree, request: ConvertRequest) {
  const mappings = (await sigmaMappings(tree)).map((m) => m.mapping);
  return convertRules(request.text, {
    mappings,
    ...(request.target !== undefined ? { target: request.target } : {}),
    ...(request.store !== undefined ? { store: request.store } : {}),
  });
}

/** Runs a converted rule over records: which match, and the paths that did. */
export { matchRecords };

/**
 * The availability lag of the log a `cloudapi://<store>/<log id>/<uri name>/...` URI reads, from
 * the store's definition (its log list: `<uri name>:<type>|<lag>|<update>`); undefined when the
 * URI or the definition says nothing about it.
 */
export function cloudLag(
  definition: unknown,
  uri: string,
): { readonly lagMs: number; readonly updateMs: number; readonly log: string } | undefined {
  const m = /^cloudapi:\/\/[^/]+\/([^/]+)\/([^/*?]+)/.exec(uri);
  if (!m) return undefined;
  const family = FAMILIES.find((f) => FAMILY_SPECS[f].logId === m[1]);
  const store = (definition as { cloudapiStore?: Record<string, unknown> } | null)?.cloudapiStore;
  if (!family || !store) return undefined;
  const list = store[FAMILY_SPECS[family].keys.logs];
  if (typeof list !== "string") return undefined;
  const parsed = parseLogList(family, list);
  if (!parsed.ok) return undefined;
  const log = parsed.logs.find((l) => l.uriName === m[2]);
  return log ? { lagMs: log.lagMs, updateMs: log.updateMs, log: `${m[1]}/${m[2]}` } : undefined;
}
