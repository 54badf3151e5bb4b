/**
 * Golden tests for the language: each `scripts/NAME.sx` runs in a fresh home whose `/shared/`
 * holds a copy of `scripts/data/`, and its result must equal `scripts/NAME.expected.json`
 * (`{"schema": ..., "rows": [...]}`, values rendered as the API renders them, in UTC).
 * The expectation also lists the query's warnings (`"warnings": [...]`, each a substring of the
 * warning at the same place; absent means none), or, for a script that must fail, only
 * `"error": {"code": ..., "message": ...}` (the message a substring of the formatted error).
 * See scripts/README.md.
 *
 *   UPDATE_GOLDEN=1 deno test --allow-all tests/golden_test.ts   # (re)writes expectations
 *
 * Review every rewritten expectation by hand: a golden file is only as right as its reader.
 */

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { engineHome } from "./support/engine_home.ts";
import { toJsonValue } from "../engine/render/render.ts";
import { schemaToJson } from "../engine/values/types.ts";
import { QueryError } from "../engine/front/diagnostics.ts";
import { createScanWorkers, type ScanWorkerPool } from "../actors/scan_workers.ts";

const SCRIPTS = join(import.meta.dirname!, "scripts");
/** Real-shaped logs by format (tests/samples/README.md), under `/shared/samples/` in each home. */
const SAMPLES = join(import.meta.dirname!, "samples");
/**
 * The modification time every sample file gets in the home, so that what is inferred from it
 * (the year of a syslog line without one) does not depend on when the repository was checked out.
 */
export const SAMPLES_MODIFIED = new Date("2025-01-15T12:00:00Z");

/**
 * Whether to rewrite the expectations (`UPDATE_GOLDEN=1`), or the reason to refuse: in CI
 * (`CI` set, as every CI service sets it) a rewrite would make every golden test pass whatever
 * it produces.
 */
export function goldenMode(
  env: { readonly UPDATE_GOLDEN?: string | undefined; readonly CI?: string | undefined },
): { update: boolean; refused?: string } {
  const update = env.UPDATE_GOLDEN !== undefined && env.UPDATE_GOLDEN !== "";
  const ci = env.CI !== undefined && env.CI !== "" && env.CI !== "false" && env.CI !== "0";
  if (update && ci) {
    return {
      update: false,
      refused:
        `UPDATE_GOLDEN=${env.UPDATE_GOLDEN} is refused in CI (CI=${env.CI}): it would rewrite ` +
        "every expectation instead of checking it; rewrite them locally and review the diff",
    };
  }
  return { update: update && env.UPDATE_GOLDEN === "1" };
}

const MODE = goldenMode({ UPDATE_GOLDEN: Deno.env.get("UPDATE_GOLDEN"), CI: Deno.env.get("CI") });

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

/** A line diff (longest common subsequence), `-` expected, `+` actual, two lines of context. */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split("\n"), b = actual.split("\n");
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j]
        ? lcs[i + 1]![j + 1]! + 1
        : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: { mark: string; text: string }[] = [];
  let i = 0, j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ mark: " ", text: a[i++]! });
      j++;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push({ mark: "+", text: b[j++]! });
    } else out.push({ mark: "-", text: a[i++]! });
  }
  const near = (k: number) => out.slice(Math.max(0, k - 2), k + 3).some((l) => l.mark !== " ");
  return out.map((l, k) => (near(k) ? `${l.mark} ${l.text}` : null))
    .filter((l) => l !== null).join("\n");
}

/** What a golden expectation holds; the runner renders the actual outcome in the same shape. */
export interface Outcome {
  readonly schema?: unknown;
  readonly rows?: unknown[];
  readonly warnings?: string[];
  readonly error?: { readonly code?: string; readonly message: string };
}

/**
 * Runs one script in a fresh home and renders what came of it (result or failure); `workers`
 * runs its scans on that many scan workers (each file cut into shares however small).
 */
export async function runScript(
  name: string,
  workers?: { readonly count: number; started: number },
): Promise<Outcome> {
  await using home = await engineHome();
  try {
    await copyTree(join(SCRIPTS, "data"), join(home.tree.root, "shared"));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await copyTree(SAMPLES, join(home.tree.root, "shared", "samples"), SAMPLES_MODIFIED);
  const text = await Deno.readTextFile(join(SCRIPTS, name));
  try {
    const pool = workers ? counting(home, workers) : undefined;
    const result = await home.run(text, pool ? { scanWorkers: pool } : {}).finally(() =>
      pool?.close()
    );
    const warnings = result.warnings.map((w) => `${w.level}: ${w.message}`);
    return {
      schema: schemaToJson(result.schema),
      rows: result.rows.map((r) => toJsonValue(r, { timeZone: "UTC" })),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  } catch (e) {
    // engineHome.run throws a plain Error holding the diagnostics when the script does not
    // compile, and execution throws a QueryError; anything else is a bug and must surface.
    if (e instanceof QueryError) {
      return { error: { code: e.diagnostic.code, message: e.message } };
    }
    if (e instanceof Error && e.name === "Error" && e.message.length > 0) {
      return { error: { message: e.message } };
    }
    throw e;
  }
}

/**
 * The actual outcome written as the expectation would be when they agree: warnings and error
 * messages are compared as substrings, so an actual text that holds the expected one is shown
 * as the expected one, and the diff points only at real differences.
 */
export function alignToExpected(actual: Outcome, expected: Outcome): Outcome {
  const warnings = actual.warnings?.map((w, i) => {
    const want = expected.warnings?.[i];
    return want !== undefined && w.includes(want) ? want : w;
  });
  const error =
    actual.error && expected.error && actual.error.message.includes(expected.error.message)
      ? { ...actual.error, message: expected.error.message }
      : actual.error;
  return {
    ...actual,
    ...(warnings ? { warnings } : {}),
    ...(error ? { error } : {}),
  };
}

const render = (o: Outcome) => JSON.stringify(o, null, 2) + "\n";

/** Real scan workers over the home's tree that count how many were started. */
function counting(
  home: { readonly tree: { readonly root: string } },
  workers: { readonly count: number; started: number },
): ScanWorkerPool {
  const real = createScanWorkers({
    count: workers.count,
    dataDir: home.tree.root,
    grants: () => [],
    minShareBytes: 1,
  });
  return {
    count: real.count,
    minShareBytes: real.minShareBytes,
    start(task, listen) {
      workers.started++;
      return real.start(task, listen);
    },
    close: () => real.close(),
  };
}

const scripts = [...Deno.readDirSync(SCRIPTS)]
  .filter((e) => e.isFile && e.name.endsWith(".sx"))
  .map((e) => e.name)
  .sort();

for (const name of scripts) {
  const stem = basename(name, ".sx");
  Deno.test(`golden script ${name} gives ${stem}.expected.json`, async () => {
    if (MODE.refused) throw new Error(MODE.refused);
    const actual = await runScript(name);
    const expectedPath = join(SCRIPTS, `${stem}.expected.json`);
    if (MODE.update) {
      await Deno.writeTextFile(expectedPath, render(actual));
      return;
    }
    let expectedText: string;
    try {
      expectedText = await Deno.readTextFile(expectedPath);
    } catch {
      throw new Error(`${stem}.expected.json is missing; run with UPDATE_GOLDEN=1 and review it`);
    }
    const expected = JSON.parse(expectedText) as Outcome;
    const want = render(expected), got = render(alignToExpected(actual, expected));
    if (want !== got) {
      throw new Error(
        `${name}: the outcome differs from ${stem}.expected.json\n${lineDiff(want, got)}`,
      );
    }
  });
}

Deno.test("UPDATE_GOLDEN rewrites expectations locally and is refused in CI", () => {
  assert.deepEqual(goldenMode({}), { update: false });
  assert.deepEqual(goldenMode({ UPDATE_GOLDEN: "1" }), { update: true });
  assert.deepEqual(goldenMode({ UPDATE_GOLDEN: "1", CI: "false" }), { update: true });
  assert.deepEqual(goldenMode({ CI: "true" }), { update: false });
  for (const value of ["1", "yes"]) {
    const mode = goldenMode({ UPDATE_GOLDEN: value, CI: "true" });
    assert.equal(mode.update, false);
    assert.match(mode.refused ?? "", /UPDATE_GOLDEN=.* is refused in CI \(CI=true\)/);
  }
});

// Differential: every script gives the same outcome with its scans on 3 workers. Where the
// order is not defined by a sort it could differ; the merge keeps the one-thread order, so the
// rows are compared in order (docs/language.md says which orders a query may not rely on).
const parallelRuns = { count: 3, started: 0 };
for (const name of scripts) {
  Deno.test(`golden script ${name} gives the same outcome with 3 scan workers`, async () => {
    const one = await runScript(name);
    const many = await runScript(name, parallelRuns);
    const want = render(one), got = render(many);
    if (want !== got) {
      throw new Error(`${name}: 3 workers differ from one thread\n${lineDiff(want, got)}`);
    }
  });
}

Deno.test("some golden scripts ran their scans on workers", () => {
  if (parallelRuns.started < 6) {
    throw new Error(`only ${parallelRuns.started} scan workers were started`);
  }
});

Deno.test("the golden diff marks changed lines and keeps context", () => {
  const diff = lineDiff("a\nb\nc\nd\ne\nf\ng", "a\nb\nc\nD\ne\nf\ng");
  if (diff !== "  b\n  c\n+ D\n- d\n  e\n  f" && diff !== "  b\n  c\n- d\n+ D\n  e\n  f") {
    throw new Error(`unexpected diff:\n${diff}`);
  }
});

Deno.test("golden warnings and errors match as substrings", () => {
  const actual: Outcome = { rows: [], warnings: ["WARN: 2 records skipped in /a.log"] };
  const aligned = alignToExpected(actual, { rows: [], warnings: ["2 records skipped"] });
  if (aligned.warnings?.[0] !== "2 records skipped") throw new Error("substring not accepted");
  const other = alignToExpected(actual, { rows: [], warnings: ["3 records skipped"] });
  if (other.warnings?.[0] !== actual.warnings![0]) throw new Error("wrong substring accepted");
  const failed = alignToExpected({ error: { code: "TYPE_ERROR", message: "line 1: bad" } }, {
    error: { code: "TYPE_ERROR", message: "bad" },
  });
  if (failed.error?.message !== "bad") throw new Error("error substring not accepted");
});
