/**
 * The edition this home is licensed for, from `conf/license`: either `edition = enterprise`
 * or `{"edition": "enterprise"}`. No file means the community edition.
 */

import { type HomeLayout, homeLayout, readTextIfExists } from "./layout.ts";

export type Edition = "community" | "enterprise";

const EDITIONS: readonly Edition[] = ["community", "enterprise"];

/** A license file that names no known edition. */
export class LicenseError extends Error {
  /**
   * @param problem what is wrong with the file, naming it as `conf/license` (never a host
   *   path), safe to show to users.
   */
  constructor(message: string, readonly problem: string = message) {
    super(message);
    this.name = "LicenseError";
  }
}

/** The edition named by a license file's text; `source` names the file in messages. */
export function parseLicense(text: string, source = "license"): Edition {
  let edition: unknown;
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      edition = (JSON.parse(trimmed) as { edition?: unknown }).edition;
    } catch (e) {
      throw new LicenseError(
        `${source} is not valid JSON: ${(e as Error).message}`,
        `conf/license is not valid JSON: ${(e as Error).message}`,
      );
    }
  } else {
    const line = trimmed.split(/\r?\n/).map((l) => l.trim())
      .find((l) => /^edition\s*=/.test(l));
    edition = line?.slice(line.indexOf("=") + 1).trim();
  }
  if (typeof edition === "string" && (EDITIONS as string[]).includes(edition.toLowerCase())) {
    return edition.toLowerCase() as Edition;
  }
  const named = typeof edition === "string" && edition !== ""
    ? `names the edition '${edition}', which does not exist`
    : "names no edition";
  const expected = `expected 'edition = enterprise' or {"edition": "enterprise"}`;
  throw new LicenseError(
    `${source} ${named}: ${expected}`,
    `conf/license ${named}: ${expected}`,
  );
}

/** The edition of a home (a folder or its layout); throws LicenseError for a malformed file. */
export async function readLicense(home: string | HomeLayout): Promise<Edition> {
  const layout = typeof home === "string" ? homeLayout(home) : home;
  const text = await readTextIfExists(layout.licenseFile);
  return text === null ? "community" : parseLicense(text, layout.licenseFile);
}
