/**
 * Requests of other servers to a query's owner (`queries/ask/<id>`): cancel it, or free it. The
 * owner polls them (or, with a storage that signals, looks when a request is signalled on the
 * channel `asks`) and takes only those of its own queries: another server's stay for it.
 */

import { askKey, ASKS, decodeText, encodeText } from "./keys.ts";
import { type Storage } from "../../engine/mod.ts";

/** How long a cancel or free request waits for its query's owner. */
export const ASK_MS = 60_000;

export type Ask = "cancel" | "free";

/** The channel on which a request is signalled (Storage.coordination). */
export const ASKS_CHANNEL = "asks";

export class Asks {
  constructor(readonly storage: Storage) {}

  /** Asks the owner of `queryId` to cancel or free it. */
  async ask(queryId: string, what: Ask): Promise<void> {
    await this.storage.put(askKey(queryId), encodeText(what), { expireInMs: ASK_MS });
    await this.storage.coordination?.notify(ASKS_CHANNEL);
  }

  /** The requests for the queries `mine` says are this server's, each removed as it is taken. */
  async *take(mine: (queryId: string) => boolean): AsyncGenerator<{ queryId: string; what: Ask }> {
    for await (const key of this.storage.list(ASKS)) {
      const queryId = key.at(-1)!;
      if (!mine(queryId)) continue;
      const asked = await this.storage.get(key);
      await this.storage.delete(key);
      const what = asked ? decodeText(asked.value) : "";
      if (what === "cancel" || what === "free") yield { queryId, what };
    }
  }
}
