/**
 * A kind of datastore an admin defines (`FILE`, `CLOUDAPI`, `AZBLOB`): one record, exported by
 * its connector's folder and registered once in main.ts. Everything outside the folder that
 * knows of kinds reads it from here: the datastore admin (actors/datastore_admin.ts: which types
 * exist, how a definition is checked, which keys are secret and which keys a kept secret is bound
 * to), the API contract's enum and `GET /datastore-kinds` (routes/), and so the console.
 *
 *   const kinds = new DatastoreKinds(registry);
 *   kinds.register(azblobKind({ definitionText }));   // azblob:// now served, AZBLOB accepted
 */

import type { DatastoreFactory, SchemeRegistry } from "./file/registry.ts";

/** One family's answer of "Test connection" (`POST /datastores/<name>/test`). */
export interface ConnectionCheck {
  readonly family: string;
  readonly ok: boolean;
  readonly message: string;
}

/** What a listing shows of a usable definition besides its name and type. */
export interface KindSummary {
  /** The log families a store enables (CLOUDAPI: `directory`, `activity`, `suite`). */
  readonly families: readonly string[];
  /** `<log_id>/<uri_name>` of each log it serves. */
  readonly logs: readonly string[];
}

/** A definition checked: what it shows, or every problem (each naming its key, never a secret). */
export type KindCheck =
  | (KindSummary & {
    readonly ok: true;
    /** "Test connection", when the kind has one. */
    readonly test?: () => Promise<readonly ConnectionCheck[]>;
  })
  | { readonly ok: false; readonly problems: readonly string[] };

/** What the API says of a kind (`GET /datastore-kinds`): its record without the functions. */
export interface KindDescription {
  /** The definition's `type`: `"AZBLOB"`. */
  readonly type: string;
  /** The scheme of its sources' URIs: `"azblob"` for `azblob://<store>/...`. */
  readonly scheme: string;
  /** The key of the definition holding the store's settings and its `acl`: `"azblobStore"`. */
  readonly storeKey: string;
  /** One line for people: what such a store reads. */
  readonly description: string;
  /**
   * Keys of the store object whose values are never shown: `GET /datastores/<name>` says
   * `<key>Set` instead. A PUT that gives none of them keeps the stored ones; one that gives any
   * replaces them all.
   */
  readonly secretKeys: readonly string[];
  /**
   * Keys of the store object that say where the secret is sent (an endpoint, an account, a
   * tenant): a PUT that changes one must give the secret again, so that a kept secret only ever
   * goes where it was entered for.
   */
  readonly boundKeys: readonly string[];
}

/** A kind: its description, how its definitions are checked, and how its URIs are served. */
export interface DatastoreKind extends KindDescription {
  /** Checks a whole definition (`{"type": ..., <storeKey>: {...}}`) of the store `name`. */
  check(name: string, json: unknown): KindCheck;
  /** Serves the scheme's URIs. */
  readonly factory: DatastoreFactory;
}

/** The registered kinds, in the order of registration; registering serves the kind's scheme. */
export class DatastoreKinds {
  readonly #kinds = new Map<string, DatastoreKind>();

  constructor(private readonly registry: SchemeRegistry) {}

  /** Adds `kind` (a later one of the same type replaces it) and serves its scheme. */
  register(kind: DatastoreKind): void {
    this.#kinds.set(kind.type, kind);
    this.registry.register(kind.scheme, kind.factory);
  }

  /** The kind whose `type` this is, if any. */
  of(type: unknown): DatastoreKind | undefined {
    return typeof type === "string" ? this.#kinds.get(type) : undefined;
  }

  /** The types, sorted: `["AZBLOB", "CLOUDAPI", "FILE"]`. */
  types(): string[] {
    return [...this.#kinds.keys()].sort();
  }

  /** Every kind, sorted by type. */
  list(): DatastoreKind[] {
    return this.types().map((t) => this.#kinds.get(t)!);
  }

  /** Every kind as the API describes it, sorted by type. */
  describe(): KindDescription[] {
    return this.list().map(({ type, scheme, storeKey, description, secretKeys, boundKeys }) => ({
      type,
      scheme,
      storeKey,
      description,
      secretKeys,
      boundKeys,
    }));
  }
}
