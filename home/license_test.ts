import assert from "node:assert/strict";
import { LicenseError, parseLicense, readLicense } from "./license.ts";
import { ensureHome } from "./layout.ts";

Deno.test("parseLicense() reads the key = value and the JSON form", () => {
  assert.equal(parseLicense("edition = enterprise\n"), "enterprise");
  assert.equal(parseLicense("# licensed to ACME\nedition=Enterprise"), "enterprise");
  assert.equal(parseLicense('{"edition": "enterprise"}'), "enterprise");
  assert.equal(parseLicense('{"edition": "community"}'), "community");
});

Deno.test("parseLicense() refuses a file that names no known edition", () => {
  for (const text of ["", "edition = platinum", '{"edition": 1}', "{", "enterprise"]) {
    assert.throws(() => parseLicense(text, "conf/license"), LicenseError, text);
  }
});

Deno.test("readLicense() is community without a license file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-license-" });
  try {
    const home = await ensureHome(dir);
    assert.equal(await readLicense(dir), "community");
    await Deno.writeTextFile(home.licenseFile, "edition = enterprise\n");
    assert.equal(await readLicense(home), "enterprise");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
