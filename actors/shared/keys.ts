import { type StorageKey, type StoredValue } from "../../engine/mod.ts";
/**
 * The key layout of the queries shared by the servers of one storage (engine/storage.ts keys),
 * one helper per part (actors/shared_queries.ts is the facade over them):
 *
 *   queries/slots            the admission document (slots.ts)
 *   queries/server/<server>  a server's lease (leases.ts)
 *   queries/q/<id>           a query's record; queries/gone/<id> its tombstone (records.ts)
 *   queries/r/<id>/<page>    its result, in pages (result_pages.ts)
 *   queries/ask/<id>         a request of another server to the query's owner (asks.ts)
 */

export const SLOTS: StorageKey = ["queries", "slots"];
export const RECORDS: StorageKey = ["queries", "q"];
export const ASKS: StorageKey = ["queries", "ask"];
export const recordKey = (id: string): StorageKey => ["queries", "q", id];
export const goneKey = (id: string): StorageKey => ["queries", "gone", id];
export const pageKey = (id: string, page: number): StorageKey => [
  "queries",
  "r",
  id,
  String(page),
];
export const leaseKey = (server: string): StorageKey => ["queries", "server", server];
export const askKey = (id: string): StorageKey => ["queries", "ask", id];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export function decodeJson(stored: StoredValue): unknown {
  return JSON.parse(decoder.decode(stored.value));
}

export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

export function decodeText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
