/**
 * The grants of `conf/rights.json` (StorageRights below: of the same document in a shared KV), kept in memory for the synchronous `may()` and reloaded
 * when the file changes. The file is stat'ed at most every 250 ms, so a change made while the
 * server runs takes effect within that time.
 */

import { fileVersionSync } from "./file_version.ts";
import { type Grant, parseRights, RightsError } from "./rights.ts";
import type { Storage, StorageKey } from "../engine/contracts/storage.ts";
import { writeFileAtomic } from "../engine/fs/atomic_write.ts";

const CHECK_EVERY_MS = 250;

export class RightsFile {
  #grants: readonly Grant[] = [];
  #version: string | null = null;
  #checkedAt = -Infinity;

  /**
   * `onError` hears of a changed file that cannot be read; the previous grants stay in force.
   * `now` is the clock of the checks (milliseconds; a test's own).
   */
  constructor(
    readonly file: string,
    private readonly onError: (error: Error) => void = () => {},
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Loads the file now; throws RightsError when it is not valid (for a check at start). */
  load(): readonly Grant[] {
    this.#checkedAt = this.now();
    const version = fileVersionSync(this.file);
    if (version !== this.#version) {
      this.#grants = version === "missing" ? [] : parseRights(Deno.readTextFileSync(this.file));
      this.#version = version;
    }
    return this.#grants;
  }

  /** The grants in force. */
  grants(): readonly Grant[] {
    if (this.now() - this.#checkedAt < CHECK_EVERY_MS) return this.#grants;
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

/** The channel on which a new rights document is signalled (Storage.coordination). */
export const RIGHTS_CHANNEL = "rights";
/** With a storage that signals a new document (PostgreSQL), the checks are a fallback. */
const SIGNALLED_CHECK_MS = 2_000;

/**
 * The grants of the rights document in a storage shared by several servers (Deno KV,
 * PostgreSQL), kept in memory for the synchronous `may()`: after the first `load()` its version
 * is checked every 250 ms in the background (one cheap read), so a change made through any
 * server or CLI takes effect on all of them within about that time. With a storage that signals
 * (PostgreSQL), a write signals the channel `rights` and every server loads the document when
 * signalled; the checks remain every SIGNALLED_CHECK_MS for a signal lost with a connection.
 * `stop()` ends the checks.
 */
export class StorageRights {
  #grants: readonly Grant[] = [];
  #version: string | null | undefined = undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #unlisten: Promise<(() => Promise<void>) | undefined> | undefined;
  #checking = false;
  #checkAgain = false;
  #stopped = false;
  readonly #checkEveryMs: number;

  /**
   * `onError` hears of a changed document that cannot be used; the previous grants stay.
   * `checkEveryMs`: how often the version is checked (by default 250 ms, or 2 s with signals).
   */
  constructor(
    private readonly storage: Storage,
    private readonly onError: (error: Error) => void = () => {},
    private readonly key: StorageKey = RIGHTS_KEY,
    options: { readonly checkEveryMs?: number } = {},
  ) {
    this.#checkEveryMs = options.checkEveryMs ??
      (storage.coordination ? SIGNALLED_CHECK_MS : CHECK_EVERY_MS);
  }

  /** Ends the background checks (before the storage closes). */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    void this.#unlisten?.then((stop) => stop?.());
  }

  #check(): void {
    if (this.#stopped) return;
    if (this.#checking) {
      // A signal during a check: one more after it.
      this.#checkAgain = true;
      return;
    }
    this.#checking = true;
    this.#checkAgain = false;
    this.load().catch((e) => {
      if (this.#stopped) return;
      this.onError(e instanceof RightsError ? e : new RightsError(`${this.key.join("/")}: ${e}`));
    }).finally(() => {
      this.#checking = false;
      if (this.#checkAgain) this.#check();
    });
  }

  #watch(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    const timer = setInterval(() => {
      if (!this.#checking) this.#check();
    }, this.#checkEveryMs);
    this.#timer = timer;
    // The checks do not keep a process alive.
    Deno.unrefTimer(timer);
    const coordination = this.storage.coordination;
    if (coordination) {
      this.#unlisten = coordination.listen(RIGHTS_CHANNEL, () => this.#check()).catch((e) => {
        this.onError(new RightsError(`${this.key.join("/")}: cannot listen for changes: ${e}`));
        return undefined;
      });
    }
  }

  /** Loads the document now; throws RightsError when it is not valid (for a check at start). */
  async load(): Promise<readonly Grant[]> {
    this.#watch();
    // Listening before the first read: no change is missed between them.
    await this.#unlisten;
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
    await this.storage.coordination?.notify(RIGHTS_CHANNEL);
    await this.load();
  }

  /** The grants in force. */
  grants(): readonly Grant[] {
    return this.#grants;
  }
}

/**
 * `rights show` / `rights set FILE`: the rights where the home keeps them, its
 * `conf/rights.json` (`rightsFile`) with the files storage, the KV's document with a KV. A file
 * that is not valid rights is refused (RightsError) and nothing is written.
 */
export async function runRightsCommand(
  command: { readonly kind: "rights show" } | {
    readonly kind: "rights set";
    readonly file: string;
  },
  rightsFile: string,
  storage: Storage,
  out: (line: string) => void,
): Promise<void> {
  const shared = storage.kind === "files" ? undefined : new StorageRights(storage);
  if (command.kind === "rights show") {
    const stored = shared ? await storage.get(RIGHTS_KEY) : null;
    const text = shared
      ? (stored ? new TextDecoder().decode(stored.value) : null)
      : await Deno.readTextFile(rightsFile).catch((e) => {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      });
    out(text === null ? "[]" : text.trimEnd());
    return;
  }
  const text = await Deno.readTextFile(command.file);
  parseRights(text, command.file);
  if (shared) {
    await shared.write(text);
    shared.stop();
  } else await writeFileAtomic(rightsFile, text);
  out(
    `Rights replaced (${
      parseRights(text, command.file).length
    } grant(s)); servers take them within a quarter of a second.`,
  );
}
