/**
 * Managing datastore definitions (docs/api.md, "Datastores"): list, read without the secret,
 * validate and store as a query would read them, delete. The definitions are files of the home
 * (home/datastore_files.ts); which types exist, how each is validated, which keys are secret and
 * which keys a kept secret is bound to are the kinds' own (connectors/datastore_kind.ts), so a
 * definition the API accepts is one a query can use, and a new kind needs no change here.
 */

import type { User } from "../engine/mod.ts";
import type {
  ConnectionCheck,
  DatastoreKind,
  DatastoreKinds,
  KindCheck,
  KindDescription,
} from "../connectors/datastore_kind.ts";
import { definitionAcl, storeAllows } from "../connectors/store_acl.ts";
import { type DatastoreFiles, STORE_NAME } from "../home/datastore_files.ts";

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

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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
    /** The kinds of store there are (main.ts registers them). */
    private readonly kinds: DatastoreKinds,
  ) {}

  /** The kinds, as the API describes them. */
  describeKinds(): KindDescription[] {
    return this.kinds.describe();
  }

  /** The types a definition may have, sorted. */
  types(): string[] {
    return this.kinds.types();
  }

  /**
   * Tests a stored definition of a kind that has a test (CLOUDAPI: a token per API and one cheap
   * read per enabled family). Null when there is no such store.
   */
  async test(name: string): Promise<readonly ConnectionCheck[] | null> {
    const text = await this.read(name);
    if (text === null) return null;
    const json = safeParse(text) ?? null;
    const checked = this.#validate(name, json);
    if (!checked.ok) throw new DatastoreProblems(checked.problems);
    if (!checked.test) {
      throw new DatastoreProblems([
        `datastore '${name}': a ${checked.kind.type} store has no connection test`,
      ]);
    }
    return await checked.test();
  }

  /**
   * Tests a definition without storing it ("Test connection" before "Save"): `json` as `put`
   * would store it (the stored secrets kept when it gives none and changes no key they are bound
   * to), validated, then its kind's test. Nothing is written.
   */
  async testDefinition(name: string, json: unknown): Promise<readonly ConnectionCheck[]> {
    if (!STORE_NAME.test(name)) {
      throw new DatastoreProblems([`'${name.slice(0, 80)}' is not a datastore name`]);
    }
    if (!isObject(json)) {
      throw new DatastoreProblems([`datastore '${name}': expected a JSON object`]);
    }
    const body = this.#merged(name, json, await this.files.read(name));
    const checked = this.#validate(name, body);
    if (!checked.ok) throw new DatastoreProblems(checked.problems);
    if (!checked.test) {
      throw new DatastoreProblems([
        `datastore '${name}': a ${checked.kind.type} store has no connection test`,
      ]);
    }
    return await checked.test();
  }

  /** The stores `user` may read (admins: all, with the problem of any that cannot be used). */
  async list(user: User): Promise<DatastoreSummary[]> {
    const out: DatastoreSummary[] = [];
    for (const name of await this.files.names()) {
      const text = await this.files.read(name);
      if (text === null) continue;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        if (user.admin) out.push(unusable(name, `datastore '${name}': not valid JSON`));
        continue;
      }
      const checked = this.#validate(name, json);
      if (checked.ok) {
        const acl = definitionAcl(json, checked.kind.storeKey);
        if (storeAllows(acl, user, "read")) {
          out.push({
            name,
            type: checked.kind.type,
            families: checked.families,
            logs: checked.logs,
          });
        }
      } else if (user.admin) out.push(unusable(name, checked.problems.join("; ")));
    }
    return out;
  }

  /**
   * The definition as stored, without its secrets (`<key>Set` says whether one is kept); null
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
    const kind = isObject(json) ? this.kinds.of(json.type) : undefined;
    const acl = kind ? definitionAcl(json, kind.storeKey) : undefined;
    if (!user.admin && !storeAllows(acl, user, "read")) return null;
    return this.#withoutSecrets(json as Json);
  }

  /**
   * Validates and stores a definition (admins; the route checks). A definition without any of its
   * kind's secret keys keeps the stored secrets, unless it changes a key they are bound to
   * (DatastoreProblems naming the key). With `ifMatch` (an ETag of `getVersioned`) it replaces
   * only that definition, else throws DefinitionChanged. Without, a definition written meanwhile
   * (by another server on a shared storage) is merged with again, so no kept secret is lost.
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

  /** False when there was no such store. */
  remove(name: string): Promise<boolean> {
    if (!STORE_NAME.test(name)) return Promise.resolve(false);
    return this.files.remove(name);
  }

  /** The text of a definition, for the parser of the datastore (`put` has checked it). */
  read(name: string): Promise<string | null> {
    return STORE_NAME.test(name) ? this.files.read(name) : Promise.resolve(null);
  }

  /** What a definition is, by its kind's own check, or its problems. */
  #validate(name: string, json: unknown):
    | (Extract<KindCheck, { ok: true }> & { kind: DatastoreKind })
    | { ok: false; problems: readonly string[] } {
    const type = isObject(json) ? json.type : undefined;
    const kind = this.kinds.of(type);
    if (!kind) {
      return {
        ok: false,
        problems: [
          `datastore '${name}': key 'type' must be one of ${this.kinds.types().join(", ")}, ` +
          `found ${typeof type === "string" ? JSON.stringify(type.slice(0, 40)) : "none"}`,
        ],
      };
    }
    const checked = kind.check(name, json);
    return checked.ok ? { ...checked, kind } : checked;
  }

  /**
   * The definition to store: `json` with the secrets kept from `previous` when it gives none
   * (and changes no key they are bound to), validated.
   */
  #merged(name: string, json: Json, previous: string | null): Json {
    const body = structuredClone(json);
    const kind = this.kinds.of(body.type);
    const store = kind ? body[kind.storeKey] : undefined;
    if (kind && isObject(store)) {
      for (const key of kind.secretKeys) delete store[`${key}Set`];
      const given = kind.secretKeys.some((k) => store[k] !== undefined);
      const old = previous === null ? undefined : safeParse(previous)?.[kind.storeKey];
      const kept = isObject(old) ? kind.secretKeys.filter((k) => typeof old[k] === "string") : [];
      if (!given && isObject(old) && kept.length > 0) {
        const moved = kind.boundKeys.filter((k) => !sameValue(store[k], old[k]));
        if (moved.length > 0) throw new DatastoreProblems(moved.map((k) => rebind(name, k, kind)));
        for (const key of kept) store[key] = old[key];
      }
    }
    const checked = this.#validate(name, body);
    if (!checked.ok) throw new DatastoreProblems(checked.problems);
    return body;
  }

  /** `json` with the secret keys of every kind's store object replaced by `<key>Set`. */
  #withoutSecrets(json: Json): Json {
    const copy = structuredClone(json);
    // Every kind's store key, whatever the type says: a secret under a mistyped definition
    // stays hidden too.
    for (const kind of this.kinds.list()) {
      const store = copy[kind.storeKey];
      if (!isObject(store)) continue;
      for (const key of kind.secretKeys) {
        const set = typeof store[key] === "string" && store[key] !== "";
        delete store[key];
        store[`${key}Set`] = set;
      }
    }
    return copy;
  }
}

function unusable(name: string, problem: string): DatastoreSummary {
  return { name, type: "UNKNOWN", families: [], logs: [], problem };
}

/** The problem of a bound key changed without the secret given again. */
function rebind(name: string, key: string, kind: DatastoreKind): string {
  const secrets = kind.secretKeys.map((k) => `'${k}'`).join(" or ");
  return `datastore '${name}': key '${key}' changed: give ${secrets} again (a stored ` +
    `credential is only sent where it was entered for; its value is not shown)`;
}

/** Equal as JSON values (absent and undefined alike). */
function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function safeParse(text: string): Json | undefined {
  try {
    const json = JSON.parse(text);
    return isObject(json) ? json : undefined;
  } catch {
    return undefined;
  }
}
