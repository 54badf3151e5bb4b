/**
 * Differential test of the column cache (engine/exec/cached_scan.ts): every golden script that
 * reads files gives the same outcome without the cache, with it cold, warm, warm on 3 scan
 * workers (other cuts of the files), and after every file of its home grew (the cached prefix
 * kept, the new lines read raw), on one thread and on 3 workers. Blocks are small here (512
 * bytes), so that the samples are cut into many.
 */

import { join } from "node:path";
import { engineHome } from "./support/engine_home.ts";
import { toJsonValue } from "../engine/render/render.ts";
import { schemaToJson } from "../engine/values/types.ts";
import { QueryError } from "../engine/front/diagnostics.ts";
import { createScanWorkers } from "../actors/scan_workers.ts";
import type { QueryContext } from "../engine/contracts/query_context.ts";
import { ColumnCache } from "../engine/fs/column_cache.ts";

const SCRIPTS = join(import.meta.dirname!, "scripts");
const SAMPLES = join(import.meta.dirname!, "samples");
/** As tests/golden_test.ts (not imported: its tests would run here too). */
const SAMPLES_MODIFIED = new Date("2025-01-15T12:00:00Z");

async function copyTree(from: string, to: string, modified?: Date): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = join(from, entry.name), target = join(to, entry.name);
    if (entry.isDirectory) await copyTree(source, target, modified);
    else {
      await Deno.copyFile(source, target);
      if (modified) await Deno.utime(target, modified, modified);
    }
  }
}

/** Appends to every file under `dir` its own first half of lines (a log that grew). */
async function growAll(dir: string): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      await growAll(path);
      continue;
    }
    const info = await Deno.stat(path);
    const text = await Deno.readTextFile(path);
    if (!text.endsWith("\n")) continue; // not a log that grows by lines
    const lines = text.split("\n");
    const more = lines.slice(0, Math.max(1, Math.floor(lines.length / 2))).join("\n") + "\n";
    await Deno.writeTextFile(path, more, { append: true });
    // The same time as before: what a pattern infers from it (a year) stays.
    await Deno.utime(path, info.mtime!, new Date(info.mtime!.getTime() + 1000));
  }
}

type Home = Awaited<ReturnType<typeof engineHome>>;

async function outcome(home: Home, text: string, overrides: Partial<QueryContext>) {
  try {
    const result = await home.run(text, overrides);
    return JSON.stringify(
      {
        schema: schemaToJson(result.schema),
        rows: result.rows.map((r) => toJsonValue(r, { timeZone: "UTC" })),
        warnings: result.warnings.map((w) => `${w.level}: ${w.message}`),
      },
      null,
      1,
    );
  } catch (e) {
    if (e instanceof QueryError) return `error ${e.diagnostic.code}: ${e.message}`;
    if (e instanceof Error && e.name === "Error") return `error: ${e.message}`;
    throw e;
  }
}

const scripts = [...Deno.readDirSync(SCRIPTS)]
  .filter((e) => e.isFile && e.name.endsWith(".sx"))
  .map((e) => e.name)
  .filter((name) =>
    /PARSE|READ_JSON|READ_CSV|READ_W3C|READ_ZEEK|\$\w+\s*=\s*'''|pattern/i.test(
      Deno.readTextFileSync(join(SCRIPTS, name)),
    )
  )
  .sort();

const used = { blocks: 0 };

for (const name of scripts) {
  Deno.test(`cache: ${name} is the same cold, warm, grown, on 1 and 3 workers`, async () => {
    await using home = await engineHome();
    try {
      await copyTree(join(SCRIPTS, "data"), join(home.tree.root, "shared"));
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    await copyTree(SAMPLES, join(home.tree.root, "shared", "samples"), SAMPLES_MODIFIED);
    const text = await Deno.readTextFile(join(SCRIPTS, name));
    const columnCache = { dir: join(home.dir, "cache"), maxBytes: 1 << 30, blockBytes: 512 };
    const workers = createScanWorkers({
      count: 3,
      dataDir: home.tree.root,
      grants: () => [],
      minShareBytes: 1,
    });
    try {
      const runs: [string, Partial<QueryContext>][] = [
        ["cold", { columnCache }],
        ["warm", { columnCache }],
        ["warm, 3 workers", { columnCache, scanWorkers: workers }],
      ];
      const check = async (want: string, label: string, overrides: Partial<QueryContext>) => {
        const got = await outcome(home, text, overrides);
        if (got !== want) {
          throw new Error(
            `${name} ${label} differs from no cache:\n--- want\n${want}\n--- got\n${got}`,
          );
        }
      };
      const plain = await outcome(home, text, {});
      for (const [label, o] of runs) await check(plain, label, o);
      const cached = await new ColumnCache(columnCache).size();
      if (cached > 0) used.blocks++;
      await growAll(join(home.tree.root, "shared"));
      const grown = await outcome(home, text, {});
      await check(grown, "grown, 3 workers", { columnCache, scanWorkers: workers });
      await check(grown, "grown", { columnCache });
      await check(grown, "grown, warm", { columnCache });
    } finally {
      workers.close();
    }
  });
}

Deno.test("cache: the golden scripts filled the cache", () => {
  if (used.blocks < 10) throw new Error(`only ${used.blocks} scripts left blocks in the cache`);
});
