/**
 * Authorizes one Blob service request with what the definition holds: a SAS token is added to
 * the query string; an account key signs the request (Shared Key: HMAC-SHA256 over the
 * canonical request, https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key),
 * with Web Crypto, so the server needs no Azure SDK.
 *
 *   const url = await authorize(def, "GET", new URL(".../arch?comp=list"), headers);
 */

import type { AzblobDefinition } from "./definition.ts";

/** The service version every request asks for. */
export const BLOB_API_VERSION = "2021-12-02";

/**
 * Sets `x-ms-date`, `x-ms-version` and the authorization on `headers`; returns the URL to send
 * (with the SAS token's parameters when the store has one).
 */
export async function authorize(
  def: Pick<AzblobDefinition, "accountName" | "accountKey" | "sasToken">,
  method: string,
  url: URL,
  headers: Headers,
): Promise<URL> {
  headers.set("x-ms-date", new Date().toUTCString());
  headers.set("x-ms-version", BLOB_API_VERSION);
  if (def.sasToken !== undefined) {
    const signed = new URL(url);
    for (const [k, v] of new URLSearchParams(def.sasToken)) signed.searchParams.append(k, v);
    return signed;
  }
  const key = await importKey(def.accountKey!);
  const text = stringToSign(def.accountName, method, url, headers);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text)));
  headers.set("Authorization", `SharedKey ${def.accountName}:${mac.toBase64()}`);
  return url;
}

/** The canonical request Shared Key signs (service version 2009-09-19 and later). */
export function stringToSign(account: string, method: string, url: URL, headers: Headers): string {
  const h = (name: string) => headers.get(name) ?? "";
  const length = h("Content-Length");
  return [
    method.toUpperCase(),
    h("Content-Encoding"),
    h("Content-Language"),
    length === "0" ? "" : length,
    h("Content-MD5"),
    h("Content-Type"),
    "", // Date: x-ms-date is signed instead
    h("If-Modified-Since"),
    h("If-Match"),
    h("If-None-Match"),
    h("If-Unmodified-Since"),
    h("Range"),
  ].join("\n") + "\n" + canonicalHeaders(headers) + canonicalResource(account, url);
}

function canonicalHeaders(headers: Headers): string {
  const lines: string[] = [];
  // Headers iterates lower-cased names in sorted order.
  for (const [name, value] of headers) {
    if (name.startsWith("x-ms-")) lines.push(`${name}:${value.trim()}\n`);
  }
  return lines.join("");
}

function canonicalResource(account: string, url: URL): string {
  const params = new Map<string, string[]>();
  for (const [k, v] of url.searchParams) {
    const name = k.toLowerCase();
    params.set(name, [...(params.get(name) ?? []), v]);
  }
  const query = [...params.keys()].sort().map((k) => `\n${k}:${params.get(k)!.sort().join(",")}`);
  return `/${account}${url.pathname}${query.join("")}`;
}

/** Importing is cheap next to a request; no cache keeps keys in memory longer than needed. */
function importKey(base64: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    Uint8Array.fromBase64(base64),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
}
