/**
 * Keeping a datastore's secret (a client secret, an account key, a SAS token) out of a message,
 * soundly, in one place for every connector.
 *
 * The messages a store's secret could reach are built not to quote it (the definitions never
 * echo the value of a credential key); this is the last line, for a text that came from
 * elsewhere (a provider's answer, a value pasted under the wrong key). Replacing every
 * occurrence of a secret's text is sound only for a secret too long to turn up by chance: a
 * one-letter secret would be "hidden" inside every word, mangling the message and showing where
 * the secret's letters are. So:
 *
 * - a secret of at least MIN_SECRET_CHARS characters is hidden wherever it occurs, and again
 *   until none is left (a replacement cannot make a new one: the marker is shorter than the
 *   secret), so that hiding twice is hiding once;
 * - a shorter one (which the definitions refuse: it only reaches here in the problems of such a
 *   definition) is hidden only where it stands as a word of its own, never inside a word nor
 *   inside a marker, again until nothing changes.
 */

/** What stands for a hidden secret. */
export const HIDDEN = "(hidden)";

/**
 * The shortest secret a definition accepts, and the shortest that is hidden wherever it occurs
 * (Azure's client secrets have about 40 characters, account keys 88, SAS signatures 44 or more).
 */
export const MIN_SECRET_CHARS = 16;

/**
 * `text` with each of `secrets` (empty or absent ones skipped) replaced by HIDDEN; idempotent:
 * `hideSecrets(hideSecrets(t, s), s) === hideSecrets(t, s)`.
 */
export function hideSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  const present = secrets.filter((s): s is string => typeof s === "string" && s !== "");
  let out = text;
  // Hiding one secret could make another (a store has one; this is for the general case).
  for (let round = 0; round < 8; round++) {
    let next = out;
    for (const secret of present) {
      next = secret.length >= MIN_SECRET_CHARS
        ? hideEverywhere(next, secret)
        : hideWords(next, secret);
    }
    if (next === out) return out;
    out = next;
  }
  // Still changing: nothing of it is shown (no secret can be in the marker itself).
  return HIDDEN;
}

function hideEverywhere(text: string, secret: string): string {
  let out = text;
  // Each round shortens the text (the secret is longer than the marker): it ends.
  while (out.includes(secret)) out = out.split(secret).join(HIDDEN);
  return out;
}

/** Word characters: letters and digits of any script, and `_`. */
const WORD = /[\p{L}\p{N}_]/u;

/**
 * Replaces the occurrences of a short secret that stand as words of their own: not glued to a
 * word character on either side, and not overlapping a marker already there. Repeated until
 * nothing changes, so that hiding twice is hiding once; it ends, because each round turns at
 * least one character that is no marker's into a marker.
 */
function hideWords(text: string, secret: string): string {
  let out = text;
  for (;;) {
    const next = hideWordsOnce(out, secret);
    if (next === out) return out;
    out = next;
  }
}

function hideWordsOnce(text: string, secret: string): string {
  const markers: number[] = [];
  for (let m = text.indexOf(HIDDEN); m >= 0; m = text.indexOf(HIDDEN, m + 1)) markers.push(m);
  const overlapsMarker = (at: number, end: number) =>
    markers.some((m) => m < end && at < m + HIDDEN.length);
  let out = "";
  let from = 0;
  for (;;) {
    const at = text.indexOf(secret, from);
    if (at < 0) return out + text.slice(from);
    const end = at + secret.length;
    const glued = WORD.test(text[at - 1] ?? "") || WORD.test(text[end] ?? "");
    if (glued || overlapsMarker(at, end)) {
      out += text.slice(from, at + 1);
      from = at + 1;
    } else {
      out += text.slice(from, at) + HIDDEN;
      from = end;
    }
  }
}
