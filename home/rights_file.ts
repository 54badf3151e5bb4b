/**
 * The grants of `conf/rights.json`, kept in memory for the synchronous `may()` and reloaded
 * when the file changes. The file is stat'ed at most every 250 ms, so a change made while the
 * server runs takes effect within that time.
 */

import { fileVersionSync } from "./file_version.ts";
import { type Grant, parseRights, RightsError } from "./rights.ts";

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
