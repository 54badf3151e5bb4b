/**
 * Access tokens: 32 random bytes, base64url, prefixed `trawl_`. Only their SHA-256 hashes are
 * stored; a presented token is hashed and compared with each stored hash in constant time.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";

export const TOKEN_PREFIX = "trawl_";

/** The shape of a token this service hands out; anything else is refused before hashing. */
export const TOKEN_PATTERN = /^trawl_[A-Za-z0-9_-]{43}$/;

/** A new random token. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return TOKEN_PREFIX + Buffer.from(bytes).toString("base64url");
}

/** The SHA-256 of a token, as 64 hex digits: the only form in which tokens are stored. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Compares two hex hashes in time independent of where they differ. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** The SHA-256 of a token as bytes: what authentication compares, without hex in between. */
export function hashTokenBytes(token: string): Uint8Array {
  return createHash("sha256").update(token, "utf8").digest();
}

/** A stored hex hash as bytes (made once per load of the users file, not per request). */
export function hashBytes(hex: string): Uint8Array {
  return Buffer.from(hex, "hex");
}

/** Compares two hashes as bytes in time independent of where they differ. */
export function sameHashBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}
