/**
 * Managing datastore definitions (docs/api.md, "Datastores"): list, read without the secret,
 * validate and store as a query would read them, delete. The definitions are files of the home
 * (home/datastore_files.ts); validation is the connectors' own, so a definition the API accepts
 * is one a query can use.
 */

import type { User } from "../engine/mod.ts";
import { parseDefinition } from "../connectors/cloudapi/definition.ts";
import { parseFileStoreDefinition } from "../connectors/file/file_store_definition.ts";
import { AZBLOB_SECRET_KEYS, parseAzblobDefinition } from "../connectors/azblob/definition.ts";
import { definitionAcl, storeAllows } from "../connectors/store_acl.ts";
import { type DatastoreFiles, STORE_NAME } from "../home/datastore_files.ts";
import { checkConnection, type FamilyCheck } from "../connectors/cloudapi/connection_check.ts";

export interface DatastoreSummary {
  readonly name: string;
  readonly type: string;
  /** The log families a CLOUDAPI store enables (`directory`, `activity`, `suite`). */
  readonly families: readonly string[];
  /** `<log_id>/<uri_name>` of each log it serves. */
  readonly logs: readonly string[];
  /** Admins only: why the stored definition cannot be used. */
  readonly problem?: string;
}

/** A definition that cannot be stored or used; each problem names the key (never the secret). */
export class DatastoreProblems extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("; "));
    this.name = "DatastoreProblems";
  }
}

export const DATASTORE_TYPES = ["AZBLOB", "CLOUDAPI", "FILE"] as const;

const LOG_IDS: Readonly<Record<string, string>> = {
  directory: "directory_service",
  activity: "cloud_activity",
  suite: "productivity_suite",
};

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What a definition is, or its problems; `name` is the store's name. */
/** Where each type of definition keeps its store's keys (and its acl). */
const STORE_KEYS = new Map([
  ["CLOUDAPI", "cloudapiStore"],
  ["FILE", "fileStore"],
  ["AZBLOB", "azblobStore"],
]);

/** The key holding a definition's store (and its acl), "" for an unknown type. */
function storeKeyOf(json: unknown): string {
  return (isObject(json) && STORE_KEYS.get(json.type as string)) || "";
}

function validate(name: string, json: unknown):
  | { ok: true; summary: DatastoreSummary; acl?: Parameters<typeof storeAllows>[0] }
  | { ok: false; problems: string[] } {
  const type = isObject(json) ? json.type : undefined;
  if (type === "CLOUDAPI") {
    const parsed = parseDefinition(name, json);
    if (!parsed.ok) return { ok: false, problems: parsed.problems };
    const def = parsed.definition;
    return {
      ok: true,
      acl: def.acl,
      summary: {
        name,
        type,
        families: [...new Set(def.logs.map((l) => l.family))],
        logs: def.logs.map((l) => `${LOG_IDS[l.family]}/${l.uriName}`),
      },
    };
  }
  if (type === "FILE") {
    const parsed = parseFileStoreDefinition(name, json);
    if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
    return {
      ok: true,
      acl: parsed.definition.acl,
      summary: { name, type, families: [], logs: [] },
    };
  }
  if (type === "AZBLOB") {
    const parsed = parseAzblobDefinition(name, json);
    if (!parsed.ok) return { ok: false, problems: parsed.problems };
    return {
      ok: true,
      acl: parsed.definition.acl,
      summary: { name, type, families: [], logs: [] },
    };
  }
  return {
    ok: false,
    problems: [
      `datastore '${name}': key 'type' must be one of ${DATASTORE_TYPES.join(", ")}, found ${
        typeof type === "string" ? JSON.stringify(type.slice(0, 40)) : "none"
      }`,
    ],
  };
}

/** A PUT with `If-Match` found another definition (written meanwhile): nothing was written. */
export class DefinitionChanged extends Error {
  constructor(name: string) {
    super(`datastore '${name}' was changed or removed meanwhile: read it again and retry`);
    this.name = "DefinitionChanged";
  }
}

export class DatastoreAdmin {
  constructor(
    private readonly files: DatastoreFiles,
    /** For "Test connection": the process's token provider and the cloud hosts' overrides. */
    private readonly cloud?: Parameters<typeof checkConnection>[1],
  ) {}

  /**
   * Tests a stored CLOUDAPI definition: a token per API and one cheap read per enabled family
   * (connectors/cloudapi/connection_check.ts). Null when there is no such store.
   */
  async test(name: string): Promise<readonly FamilyCheck[] | null> {
    const text = await this.read(name);
    if (text === null) return null;
    const parsed = parseDefinition(name, safeParse(text) ?? null);
    if (!parsed.ok) throw new DatastoreProblems(parsed.problems);
    if (!this.cloud) throw new DatastoreProblems([`datastore '${name}': no cloud access here`]);
    return await checkConnection(parsed.definition, this.cloud);
  }

  /** The stores `user` may read (admins: all, with the problem of any that cannot be used). */
  async list(user: User): Promise<DatastoreSummary[]> {
    const out: DatastoreSummary[] = [];
    for (const name of await this.files.names()) {
      const text = await this.files.read(name);
      if (text === null) continue;
      let checked;
      try {
        checked = validate(name, JSON.parse(text));
      } catch {
        checked = { ok: false as const, problems: [`datastore '${name}': not valid JSON`] };
      }
      if (checked.ok) {
        if (storeAllows(checked.acl, user, "read")) out.push(checked.summary);
      } else if (user.admin) {
        out.push({
          name,
          type: "UNKNOWN",
          families: [],
          logs: [],
          problem: checked.problems.join("; "),
        });
      }
    }
    return out;
  }

  /**
   * The definition as stored, without the secret (`secretSet` says whether one is kept); null
   * when there is none or `user` may not read it (the same answer, so names do not leak).
   */
  async get(user: User, name: string): Promise<Json | null> {
    if (!STORE_NAME.test(name)) return null;
    const text = await this.files.read(name);
    if (text === null) return null;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return user.admin
        ? { type: "UNKNOWN", problem: "the stored definition is not valid JSON" }
        : null;
    }
    // The acl as a query reads it (readableDefinition): a user it names sees the store even when
    // its definition has a problem (which the store's queries then tell), so that a listing, this
    // answer and a query agree on which stores exist for them.
    const checked = validate(name, json);
    const acl = checked.ok ? checked.acl : definitionAcl(json, storeKeyOf(json));
    if (!user.admin && !storeAllows(acl, user, "read")) return null;
    return withoutSecret(json as Json);
  }

  /**
   * Validates and stores a definition (admins; the route checks). A CLOUDAPI definition without
   * `secret` keeps the stored one. With `ifMatch` (an ETag of `getVersioned`) it replaces only
   * that definition, else throws DefinitionChanged. Without, a definition written meanwhile (by
   * another server on a shared storage) is merged with again, so no kept secret is lost.
   * Returns whether the store is new and its new ETag.
   */
  async put(
    name: string,
    json: unknown,
    ifMatch?: string,
  ): Promise<{ created: boolean; etag: string }> {
    if (!STORE_NAME.test(name)) {
      throw new DatastoreProblems([
        `'${
          name.slice(0, 80)
        }' is not a datastore name: 1 to 64 letters, digits, '_', '-', '.' (not first or last)`,
      ]);
    }
    if (!isObject(json)) {
      throw new DatastoreProblems([`datastore '${name}': expected a JSON object`]);
    }
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.files.readVersioned(name);
      if (ifMatch !== undefined && current?.etag !== ifMatch) throw new DefinitionChanged(name);
      const body = this.#merged(name, json, current?.text ?? null);
      const etag = await this.files.write(
        name,
        JSON.stringify(body, null, 2) + "\n",
        current?.etag ?? null,
      );
      if (etag !== null) return { created: current === null, etag };
      if (ifMatch !== undefined) throw new DefinitionChanged(name);
    }
    throw new DefinitionChanged(name);
  }

  /** The ETag of a stored definition `user` may read, else null (as `get`). */
  async etag(user: User, name: string): Promise<string | null> {
    if ((await this.get(user, name)) === null) return null;
    return (await this.files.readVersioned(name))?.etag ?? null;
  }

  /** The definition to store: `json` with the credentials kept from `previous`, validated. */
  #merged(name: string, json: Json, previous: string | null): Json {
    const body = structuredClone(json);
    const store = body.cloudapiStore;
    if (body.type === "CLOUDAPI" && isObject(store)) {
      delete store.secretSet;
      if (store.secret === undefined && previous !== null) {
        const old = safeParse(previous);
        const oldSecret = isObject(old?.cloudapiStore) ? old.cloudapiStore.secret : undefined;
        if (typeof oldSecret === "string") store.secret = oldSecret;
      }
    }
    keepAzblobCredentials(body, previous);
    const checked = validate(name, body);
    if (!checked.ok) throw new DatastoreProblems(checked.problems);
    return body;
  }

  /** False when there was no such store. */
  remove(name: string): Promise<boolean> {
    if (!STORE_NAME.test(name)) return Promise.resolve(false);
    return this.files.remove(name);
  }

  /** The text of a definition, for the parser of the datastore (`put` has checked it). */
  read(name: string): Promise<string | null> {
    return STORE_NAME.test(name) ? this.files.read(name) : Promise.resolve(null);
  }
}

function safeParse(text: string): Json | undefined {
  try {
    const json = JSON.parse(text);
    return isObject(json) ? json : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An AZBLOB definition without `accountKey` and `sasToken` keeps the stored credential (GET
 * shows neither, so what it shows can be PUT back); one given replaces both.
 */
function keepAzblobCredentials(body: Json, previous: string | null): void {
  const store = body.azblobStore;
  if (body.type !== "AZBLOB" || !isObject(store)) return;
  for (const key of AZBLOB_SECRET_KEYS) delete store[`${key}Set`];
  if (AZBLOB_SECRET_KEYS.some((k) => store[k] !== undefined) || previous === null) return;
  const old = safeParse(previous)?.azblobStore;
  if (!isObject(old)) return;
  for (const key of AZBLOB_SECRET_KEYS) {
    if (typeof old[key] === "string") store[key] = old[key];
  }
}

function withoutSecret(json: Json): Json {
  const copy = structuredClone(json);
  const azblob = copy.azblobStore;
  if (isObject(azblob)) {
    for (const key of AZBLOB_SECRET_KEYS) {
      const set = typeof azblob[key] === "string" && azblob[key] !== "";
      delete azblob[key];
      azblob[`${key}Set`] = set;
    }
  }
  const store = copy.cloudapiStore;
  if (isObject(store)) {
    const set = typeof store.secret === "string" && store.secret !== "";
    delete store.secret;
    store.secretSet = set;
  }
  return copy;
}
