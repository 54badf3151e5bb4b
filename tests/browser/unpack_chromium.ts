/**
 * Unpacks npm's `@sparticuz/chromium` (a headless Chromium with its NSS libraries and a font) into
 * $TMPDIR with the package's own unpacker, and prints where as JSON. browser.ts runs it in a child
 * process whose TMPDIR is a private folder, because the package always unpacks into the temp
 * folder and reuses whatever `chromium` it finds there.
 *
 *   TMPDIR=/tmp/x deno run -A tests/browser/unpack_chromium.ts
 *   {"executable":"/tmp/x/chromium","libraries":"/tmp/x/al2023/lib","fonts":"/tmp/x/fonts/fonts"}
 */

import chromium, { inflate } from "@sparticuz/chromium";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../bin/", import.meta.resolve("@sparticuz/chromium")));
// The package unpacks its NSS libraries (built for Amazon Linux 2023, on which glibc 2.34 is
// old enough for any current Linux) only on Amazon Linux: unpack them anyway, for a machine
// without libnss3.
const [executable] = await Promise.all([
  chromium.executablePath(bin),
  inflate(join(bin, "al2023.tar.br")),
]);
// deno-lint-ignore no-console -- the parent process reads this line
console.log(JSON.stringify({
  executable,
  libraries: join(tmpdir(), "al2023", "lib"),
  fonts: join(tmpdir(), "fonts", "fonts"),
}));
