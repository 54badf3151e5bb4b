// deno-lint-ignore-file no-console
/**
 * Fails on an import cycle or on an import against the layer order
 * `main.ts → routes → actors → engine ← connectors` (see docs/architecture.md), against the
 * order of the engine's sub-layers (ENGINE_ORDER, engine/README.md), or past the engine's doors
 * (routes and actors import engine/mod.ts only; connectors and the home the lower sub-layers).
 *
 *   deno task layers            # check the repository
 *   deno task layers --graph    # also print the layer-to-layer import counts
 *
 * Every relative import counts, type-only ones included: a cycle through types still ties the
 * files together for a reader, and a type import against the layers is where a real one starts.
 */

import { dirname, join, normalize, relative } from "node:path";

/** Which top-level folders each layer may import from (besides itself). */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  engine: [],
  connectors: ["engine"],
  home: ["engine"],
  actors: ["engine", "connectors", "home"],
  routes: ["actors", "engine", "home"],
  console: [],
};

/**
 * The engine's sub-layers, lowest first: a file in one may import its own row and the rows
 * below, never one above. Folders in one row may import each other (the cycle check still holds
 * for their files). The files at engine/'s root (engine.ts, language.ts, share_run.ts and the door
 * mod.ts) stand on all of them. A unit test beside the code may use the whole engine.
 */
export const ENGINE_ORDER: readonly (readonly string[])[] = [
  ["util", "simd"],
  ["values"],
  ["render"],
  ["front"],
  ["contracts"],
  ["table", "fs"],
  ["plan"],
  ["pattern", "functions", "expr"],
  ["exec"],
  ["planning"],
];

/**
 * Imports against ENGINE_ORDER that stand until their fix lands, each with why (file → folder).
 * Keep it short: a new entry needs a reason a reviewer accepts.
 */
export const ENGINE_EXCEPTIONS: Readonly<Record<string, string>> = {
  // The checker's list of functions is derived from their declarations beside their code, which
  // need the syntax tree's spans and QueryError of front/: a cycle of folders, not of files.
  "engine/front/checker_catalog.ts": "functions",
};

/** What the other layers may import of the engine: its door, or some of its lower sub-layers. */
export const ENGINE_DOORS: Readonly<Record<string, readonly string[]>> = {
  routes: ["mod.ts"],
  actors: ["mod.ts"],
  // They implement the contracts, and read with the values, the diagnostics and the files below.
  connectors: ["util", "values", "contracts", "front", "table", "fs", "plan"],
  home: ["util", "values", "contracts", "front", "table", "fs", "plan"],
};

/** Folders outside the layers: they may import anything, and nothing in a layer imports them. */
const OUTSIDE = new Set(["tests", "bench", "tools", "main.ts", "edge.ts"]);
const SKIP = new Set(["node_modules", "dist", "trawl-home", ".git", "data"]);

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^"';]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

export interface Problem {
  readonly kind: "layer" | "engine" | "cycle" | "unknown";
  readonly message: string;
}

/** The relative imports of every .ts file under `root`, as repository-relative paths. */
export async function importGraph(root: string): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for await (const file of walkTs(root, root)) {
    const text = await Deno.readTextFile(join(root, file));
    const targets: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec?.startsWith(".")) continue;
      targets.push(normalize(join(dirname(file), spec)));
    }
    graph.set(file, targets);
  }
  return graph;
}

async function* walkTs(root: string, dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    if (SKIP.has(entry.name) || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walkTs(root, path);
    else if (entry.isFile && /\.(ts|tsx)$/.test(entry.name)) yield relative(root, path);
  }
}

/** The layer a repository-relative path belongs to: its top folder, or the file itself. */
export function layerOf(path: string): string {
  const slash = path.indexOf("/");
  return slash < 0 ? path : path.slice(0, slash);
}

/** The sub-layer of an engine file (its folder under engine/), or "" for a file at engine/'s root. */
export function engineLayerOf(path: string): string {
  const parts = path.split("/");
  return parts.length > 2 ? parts[1]! : "";
}

/** The row of a sub-layer in ENGINE_ORDER; the root above them all, an unknown folder at -1. */
function engineRank(layer: string): number {
  if (layer === "") return ENGINE_ORDER.length;
  return ENGINE_ORDER.findIndex((row) => row.includes(layer));
}

/** The problem with an import into engine/ (`to`), if any. */
function engineProblem(from: string, to: string): Problem | null {
  const target = engineLayerOf(to);
  const source = layerOf(from);
  if (source !== "engine") {
    const doors = ENGINE_DOORS[source];
    if (doors === undefined) return null;
    const entry = target === "" ? to.slice("engine/".length) : target;
    if (doors.includes(entry)) return null;
    return {
      kind: "engine",
      message: `${from} imports ${to}: ${source} may import of the engine only ${
        doors.map((d) => d.endsWith(".ts") ? `engine/${d}` : `engine/${d}/`).join(", ")
      }`,
    };
  }
  const own = engineLayerOf(from);
  if (from.endsWith("_test.ts") || own === target) return null;
  if (ENGINE_EXCEPTIONS[from] === target) return null;
  for (const layer of [own, target]) {
    if (engineRank(layer) < 0) {
      return {
        kind: "unknown",
        message:
          `${from} imports ${to}: engine/${layer}/ is in no sub-layer (add it to ENGINE_ORDER)`,
      };
    }
  }
  if (engineRank(target) <= engineRank(own)) return null;
  return {
    kind: "engine",
    message: `${from} imports ${to}: engine/${own}/ may not import engine/${target || "*.ts"}, ` +
      `a sub-layer above it (${ENGINE_ORDER.map((row) => row.join("+")).join(" < ")} < root)`,
  };
}

/** Imports that go against the layer order, and every import cycle (one line each). */
export function findProblems(graph: ReadonlyMap<string, readonly string[]>): Problem[] {
  const problems: Problem[] = [];
  for (const [from, targets] of graph) {
    const source = layerOf(from);
    for (const to of targets) {
      const target = layerOf(to);
      if (target === "engine" && !OUTSIDE.has(source)) {
        const problem = engineProblem(from, to);
        if (problem) problems.push(problem);
      }
      if (source === target || OUTSIDE.has(source)) continue;
      // A unit test beside the code may use the shared test support (temp trees, homes).
      if (from.endsWith("_test.ts") && to.startsWith("tests/support/")) continue;
      if (OUTSIDE.has(target)) {
        problems.push({
          kind: "layer",
          message: `${from} imports ${to}: nothing in a layer imports ${target}`,
        });
      } else if (!(source in LAYERS)) {
        problems.push({
          kind: "unknown",
          message: `${from}: '${source}' is in no layer (add it to LAYERS)`,
        });
      } else if (!LAYERS[source]!.includes(target)) {
        const allowed = LAYERS[source]!.join(", ") || "nothing outside itself";
        problems.push({
          kind: "layer",
          message: `${from} imports ${to}: ${source} may import ${allowed}`,
        });
      }
    }
  }
  for (const cycle of findCycles(graph)) {
    problems.push({ kind: "cycle", message: `import cycle: ${[...cycle, cycle[0]].join(" → ")}` });
  }
  return problems;
}

/** Strongly connected components of more than one file (Tarjan), each as one cycle through it. */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = graph.get(node)?.includes(node);
      if (component.length > 1 || selfLoop) components.push(pathThrough(graph, component));
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/** One cycle through a strongly connected component, starting at its first file by name. */
function pathThrough(graph: ReadonlyMap<string, readonly string[]>, component: string[]): string[] {
  const members = new Set(component);
  const start = [...members].sort()[0];
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (to === start) {
        const cycle = [node];
        while (cycle[0] !== start) cycle.unshift(previous.get(cycle[0]!)!);
        return cycle;
      }
      if (members.has(to) && !previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [...members].sort();
}

if (import.meta.main) {
  const root = Deno.cwd();
  const graph = await importGraph(root);
  if (Deno.args.includes("--graph")) {
    const counts = new Map<string, number>();
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const key = `${layerOf(from)} → ${layerOf(to)}`;
        if (layerOf(from) !== layerOf(to)) counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    for (const [key, n] of [...counts].sort()) console.log(`${key}: ${n}`);
  }
  const problems = findProblems(graph);
  for (const p of problems) console.error(p.message);
  if (problems.length > 0) {
    console.error(`${problems.length} layer problem(s) in ${graph.size} files`);
    Deno.exit(1);
  }
  console.log(`layers: ${graph.size} files, no cycle, every import in layer order`);
}
