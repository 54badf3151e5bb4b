/**
 * Golden tests for the language: each `scripts/NAME.sx` runs in a fresh home whose `/shared/`
 * holds a copy of `scripts/data/`, and its result must equal `scripts/NAME.expected.json`
 * (`{"schema": ..., "rows": [...]}`, values rendered as the API renders them, in UTC).
 *
 *   UPDATE_GOLDEN=1 deno test --allow-all tests/golden_test.ts   # (re)writes expectations
 *
 * Review every rewritten expectation by hand: a golden file is only as right as its reader.
 */

import { basename, join } from "node:path";
import { engineHome } from "./support/engine_home.ts";
import { toJsonValue } from "../engine/render.ts";
import { schemaToJson } from "../engine/types.ts";

const SCRIPTS = join(import.meta.dirname!, "scripts");
const UPDATE = Deno.env.get("UPDATE_GOLDEN") === "1";

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = join(from, entry.name), target = join(to, entry.name);
    if (entry.isDirectory) await copyTree(source, target);
    else await Deno.copyFile(source, target);
  }
}

/** A line diff (longest common subsequence), `-` expected, `+` actual, two lines of context. */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split("\n"), b = actual.split("\n");
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: { mark: string; text: string }[] = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ mark: " ", text: a[i++] });
      j++;
    } else if (j < b.length && (i === a.length || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out.push({ mark: "+", text: b[j++] });
    } else out.push({ mark: "-", text: a[i++] });
  }
  const near = (k: number) => out.slice(Math.max(0, k - 2), k + 3).some((l) => l.mark !== " ");
  return out.map((l, k) => (near(k) ? `${l.mark} ${l.text}` : null))
    .filter((l) => l !== null).join("\n");
}

const scripts = [...Deno.readDirSync(SCRIPTS)]
  .filter((e) => e.isFile && e.name.endsWith(".sx"))
  .map((e) => e.name)
  .sort();

for (const name of scripts) {
  const stem = basename(name, ".sx");
  Deno.test(`golden script ${name} gives ${stem}.expected.json`, async () => {
    await using home = await engineHome();
    try {
      await copyTree(join(SCRIPTS, "data"), join(home.tree.root, "shared"));
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    const text = await Deno.readTextFile(join(SCRIPTS, name));
    const result = await home.run(text);
    const actual = JSON.stringify(
      {
        schema: schemaToJson(result.schema),
        rows: result.rows.map((r) => toJsonValue(r, { timeZone: "UTC" })),
      },
      null,
      2,
    ) + "\n";
    const expectedPath = join(SCRIPTS, `${stem}.expected.json`);
    if (UPDATE) {
      await Deno.writeTextFile(expectedPath, actual);
      return;
    }
    let expected: string;
    try {
      expected = await Deno.readTextFile(expectedPath);
    } catch {
      throw new Error(`${stem}.expected.json is missing; run with UPDATE_GOLDEN=1 and review it`);
    }
    if (expected !== actual) {
      throw new Error(
        `${name}: the result differs from ${stem}.expected.json\n${lineDiff(expected, actual)}`,
      );
    }
  });
}
