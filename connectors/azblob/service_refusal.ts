/**
 * Answers of the Blob service that no retry changes (a refused credential, a missing
 * container), and the query error a refused credential becomes: it names the store and the
 * account, never the key or the token.
 */

import { QueryError } from "../../engine/front/diagnostics.ts";
import type { AzblobDefinition } from "./definition.ts";

export class BlobServiceRefusal extends Error {
  constructor(readonly status: number, readonly code: string | undefined) {
    super(`the service answered ${status}${code ? ` (${code})` : ""}`);
    this.name = "BlobServiceRefusal";
  }

  /** 401 or 403: the key is wrong, or the SAS token expired or lacks a permission. */
  get credentialsRefused(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The BAD_DATASTORE of a store whose account refused its credentials. */
export function credentialsError(def: AzblobDefinition, refusal: BlobServiceRefusal): QueryError {
  return new QueryError({
    code: "BAD_DATASTORE",
    message: `datastore '${def.name}': the storage account '${def.accountName}' refused its ` +
      `credentials (${refusal.message}); check its ${
        def.sasToken !== undefined ? "sasToken" : "accountKey"
      }`,
  });
}
