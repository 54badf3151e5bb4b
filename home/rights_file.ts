/**
 * The grants of `conf/rights.json` (StorageRights below: of the same document in a shared KV), kept in memory for the synchronous `may()` and reloaded
 * when the file changes. The file is stat'ed at most every 250 ms, so a change made while the
 * server runs takes effect within that time.
 */

import { fileVersionSync } from "./file_version.ts";
import { type Grant, parseRights, RightsError } from "./rights.ts";
import type { Storage, StorageKey } from "../engine/storage.ts";

const CHECK_EVERY_MS = 250;

export class RightsFile {
  #grants: readonly Grant[] = [];
  #version: string | null = null;
  #checkedAt = -Infinity;

  /** `onError` hears of a changed file that cannot be read; the previous grants stay in force. */
  constructor(
    readonly file: string,
    private readonly onError: (error: Error) => void = () => {},
  ) {}

  /** Loads the file now; throws RightsError when it is not valid (for a check at start). */
  load(): readonly Grant[] {
    this.#checkedAt = performance.now();
    const version = fileVersionSync(this.file);
    if (version !== this.#version) {
      this.#grants = version === "missing" ? [] : parseRights(Deno.readTextFileSync(this.file));
      this.#version = version;
    }
    return this.#grants;
  }

  /** The grants in force. */
  grants(): readonly Grant[] {
    if (performance.now() - this.#checkedAt < CHECK_EVERY_MS) return this.#grants;
    try {
      return this.load();
    } catch (e) {
      // Do not report the same bad file again on every check.
      this.#version = fileVersionSync(this.file);
      this.onError(e instanceof RightsError ? e : new RightsError(`${this.file}: ${e}`));
      return this.#grants;
    }
  }
}

/** The key of the rights document in a shared storage (the KV): the same name as in a home. */
export const RIGHTS_KEY: StorageKey = ["conf", "rights.json"];

/**
 * The grants of the rights document in a storage shared by several servers (Deno KV), kept in
 * memory for the synchronous `may()`: its version is checked at most every 250 ms, in the
 * background, so a change made through any server takes effect on all of them within about that
 * time (the first check after it answers with the grants before it).
 */
export class StorageRights {
  #grants: readonly Grant[] = [];
  #version: string | null | undefined = undefined;
  #checkedAt = -Infinity;
  #checking: Promise<void> | null = null;

  /** `onError` hears of a changed document that cannot be used; the previous grants stay. */
  constructor(
    private readonly storage: Storage,
    private readonly onError: (error: Error) => void = () => {},
    private readonly key: StorageKey = RIGHTS_KEY,
  ) {}

  /** Loads the document now; throws RightsError when it is not valid (for a check at start). */
  async load(): Promise<readonly Grant[]> {
    this.#checkedAt = performance.now();
    const version = await this.storage.version(this.key);
    if (version === this.#version) return this.#grants;
    const stored = await this.storage.get(this.key);
    const source = `${this.key.join("/")} (${this.storage.kind})`;
    try {
      this.#grants = stored === null
        ? []
        : parseRights(new TextDecoder().decode(stored.value), source);
    } finally {
      // A bad document is reported once, not on every check; the previous grants stay.
      this.#version = stored?.version ?? null;
    }
    return this.#grants;
  }

  /** Is there no rights document in the storage? */
  async isMissing(): Promise<boolean> {
    return (await this.storage.version(this.key)) === null;
  }

  /** Replaces the document (checked first: a bad one throws RightsError and is not written). */
  async write(text: string): Promise<void> {
    parseRights(text, this.key.join("/"));
    await this.storage.put(this.key, new TextEncoder().encode(text));
    await this.load();
  }

  /** The grants in force. */
  grants(): readonly Grant[] {
    if (performance.now() - this.#checkedAt >= CHECK_EVERY_MS && this.#checking === null) {
      this.#checkedAt = performance.now();
      this.#checking = this.load().then(() => {}, (e) => {
        this.onError(e instanceof RightsError ? e : new RightsError(`${this.key.join("/")}: ${e}`));
      }).finally(() => {
        this.#checking = null;
      });
    }
    return this.#grants;
  }
}
