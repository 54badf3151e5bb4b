/**
 * A throwaway Trawl home for engine tests: a temp folder with `data/{users/<name>,shared,system}`,
 * an FsResourceTree over it and a QueryContext for one user. Other tests may reuse it.
 *
 *   await using home = await engineHome();          // user "alice", UTC
 *   await home.write("/shared/a.log", "line\n");     // a file in the tree
 *   const { rows, schema } = await home.run("VALUES((a: 1)) | select(a)");
 */

import { dirname, join } from "node:path";
import { compile, execute } from "../../engine/engine.ts";
import { type QueryContext } from "../../engine/contracts/query_context.ts";
import { type ScriptSource } from "../../engine/contracts/script_source.ts";
import { FsResourceTree } from "../../home/resource_tree.ts";
import type { Grant } from "../../home/rights.ts";
import type { User } from "../../engine/contracts/user.ts";
import { createDatastoreRegistry } from "../../connectors/file/registry.ts";
import type { Warning } from "../../engine/contracts/datastore.ts";
import { type Diagnostic, formatDiagnostic } from "../../engine/front/diagnostics.ts";
import type { Schema } from "../../engine/values/types.ts";
import type { Row } from "../../engine/values/values.ts";

export interface EngineHome extends AsyncDisposable {
  /** The temp folder (the home); the tree is under `<dir>/data`. */
  readonly dir: string;
  readonly tree: FsResourceTree;
  readonly user: User;
  /** A context for `user`, with `overrides` applied. */
  context(overrides?: Partial<QueryContext>): QueryContext;
  /** Writes a file at a virtual path (folders are made). */
  write(path: string, content: string | Uint8Array): Promise<void>;
  /** Compiles and runs to the end; throws an Error with the diagnostics when it does not compile. */
  run(source: string | ScriptSource, overrides?: Partial<QueryContext>): Promise<RunResult>;
  /** Compiles only; the diagnostics (empty when it compiled). */
  diagnose(source: string | ScriptSource, overrides?: Partial<QueryContext>): Promise<Diagnostic[]>;
}

export interface RunResult {
  readonly rows: Row[];
  readonly schema: Schema;
  readonly warnings: Warning[];
  readonly progress: number[];
}

export interface EngineHomeOptions {
  readonly user?: User;
  readonly grants?: readonly Grant[];
  readonly timeZone?: string;
  readonly memoryLimit?: number;
}

export async function engineHome(options: EngineHomeOptions = {}): Promise<EngineHome> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-engine-" });
  const user = options.user ?? { name: "alice", groups: [], admin: false };
  for (const sub of [`users/${user.name}`, "shared", "system"]) {
    await Deno.mkdir(join(dir, "data", sub), { recursive: true });
  }
  const grants = options.grants ?? [];
  const tree = new FsResourceTree(join(dir, "data"), { grants: () => grants });
  const datastores = createDatastoreRegistry(tree);
  const context = (overrides: Partial<QueryContext> = {}): QueryContext => ({
    user,
    workDir: `/users/${user.name}`,
    timeZone: options.timeZone ?? "UTC",
    args: {},
    datastores,
    tree,
    limits: { memoryLimit: options.memoryLimit ?? 256 * 1024 * 1024 },
    ...overrides,
  });
  const toSource = (s: string | ScriptSource) => (typeof s === "string" ? { text: s } : s);
  const home: EngineHome = {
    dir,
    tree,
    user,
    context,
    async write(path, content) {
      const real = tree.resolve(user, path).real;
      await Deno.mkdir(dirname(real), { recursive: true });
      if (typeof content === "string") await Deno.writeTextFile(real, content);
      else await Deno.writeFile(real, content);
    },
    async diagnose(source, overrides) {
      const compiled = await compile(toSource(source), context(overrides));
      return compiled.ok ? [] : [...compiled.diagnostics];
    },
    async run(source, overrides) {
      const compiled = await compile(toSource(source), context(overrides));
      if (!compiled.ok) {
        throw new Error(compiled.diagnostics.map(formatDiagnostic).join("\n"));
      }
      const warnings: Warning[] = [];
      const progress: number[] = [];
      const run = execute(compiled.plan, {
        signal: new AbortController().signal,
        onWarning: (w) => warnings.push(w),
        onProgress: (f) => progress.push(f),
      });
      const rows: Row[] = [];
      for await (const batch of run.batches) rows.push(...batch);
      return { rows, schema: run.schema(), warnings, progress };
    },
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
  return home;
}
