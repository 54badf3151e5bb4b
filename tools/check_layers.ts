// deno-lint-ignore-file no-console
/**
 * Fails on an import cycle or on an import against the layer order
 * `main.ts → routes → actors → engine ← connectors` (see docs/architecture.md).
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

/** Folders outside the layers: they may import anything, and nothing in a layer imports them. */
const OUTSIDE = new Set(["tests", "bench", "tools", "main.ts", "edge.ts"]);
const SKIP = new Set(["node_modules", "dist", "trawl-home", ".git", "data"]);

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^"';]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

export interface Problem {
  readonly kind: "layer" | "cycle" | "unknown";
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

/** Imports that go against the layer order, and every import cycle (one line each). */
export function findProblems(graph: ReadonlyMap<string, readonly string[]>): Problem[] {
  const problems: Problem[] = [];
  for (const [from, targets] of graph) {
    const source = layerOf(from);
    for (const to of targets) {
      const target = layerOf(to);
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
