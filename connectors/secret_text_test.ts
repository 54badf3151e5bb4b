import assert from "node:assert/strict";
import fc from "fast-check";
import { HIDDEN, hideSecrets, MIN_SECRET_CHARS } from "./secret_text.ts";

const SECRET = "Xq8~a1Bc.dE2fG3hI4jK5lM6nO7pQ8rS9tU0vW-yZ"; // 42, like Azure's

Deno.test("a long secret is hidden wherever it occurs, also glued to other text", () => {
  const text = `invalid_client: client_secret=${SECRET}&scope=x; again '${SECRET}'${SECRET}`;
  assert.equal(
    hideSecrets(text, [SECRET]),
    `invalid_client: client_secret=${HIDDEN}&scope=x; again '${HIDDEN}'${HIDDEN}`,
  );
});

Deno.test("a short secret never hides letters inside words: the message stays as it is", () => {
  // The audit's case: secret "e" made "datastor(hidden) 's7': k(hidden)y ..." and hid it twice.
  const text =
    "datastore 's7': key 'suitePlan' has value \"bad\": allowed: ent, gcc, gcc_high, dod";
  for (const secret of ["e", "s", "ent", "d", "'", ":", " ", "hidden", "(hidden)"]) {
    const once = hideSecrets(text, [secret]);
    assert.equal(hideSecrets(once, [secret]), once, secret);
    assert.ok(!/[a-z]\(hidden\)|\(hidden\)[a-z]|\(hidd\(/.test(once), `${secret}: ${once}`);
  }
  assert.equal(hideSecrets(text, ["e"]), text);
  assert.equal(hideSecrets("invalid_client: bad secret", ["e"]), "invalid_client: bad secret");
  // Where it is a word of its own it is hidden.
  assert.equal(hideSecrets("key 'x' has value \"bad\"", ["bad"]), `key 'x' has value "${HIDDEN}"`);
});

/** Where a short secret still stands as a word of its own outside any marker, or -1. */
function standing(text: string, secret: string): number {
  const word = /[\p{L}\p{N}_]/u;
  for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
    const end = at + secret.length;
    if (word.test(text[at - 1] ?? "") || word.test(text[end] ?? "")) continue;
    let inMarker = false;
    for (let m = text.indexOf(HIDDEN); m >= 0; m = text.indexOf(HIDDEN, m + 1)) {
      if (m < end && at < m + HIDDEN.length) inMarker = true;
    }
    if (!inMarker) return at;
  }
  return -1;
}

Deno.test("hiding twice is hiding once, a long secret is never left and a short one never stands alone, for any text", () => {
  const piece = fc.constantFrom("(", ")", "hidden", "h", "n)", "e", "-", " ", "a", "'", "~");
  const secretArb = fc.oneof(
    fc.array(piece, { minLength: 1, maxLength: 4 }).map((p) => p.join("")),
    fc.array(piece, { minLength: 4, maxLength: 12 }).map((p) => p.join(""))
      .filter((s) => s.length >= MIN_SECRET_CHARS),
  );
  fc.assert(
    fc.property(
      secretArb,
      fc.array(fc.oneof(piece, fc.constant(HIDDEN), fc.constant("@S@")), { maxLength: 30 }),
      (secret, parts) => {
        const text = parts.map((p) => (p === "@S@" ? secret : p)).join("");
        const once = hideSecrets(text, [secret]);
        assert.equal(hideSecrets(once, [secret]), once);
        if (secret.length >= MIN_SECRET_CHARS) assert.ok(!once.includes(secret));
        else assert.equal(standing(once, secret), -1, `${JSON.stringify(secret)} in ${once}`);
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("several secrets, empty and absent ones are fine", () => {
  const other = "sv=2024-01-01&sig=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG%3D";
  assert.equal(
    hideSecrets(`a ${SECRET} b ${other} c`, [SECRET, undefined, "", other]),
    `a ${HIDDEN} b ${HIDDEN} c`,
  );
  assert.equal(hideSecrets("nothing here", []), "nothing here");
});
