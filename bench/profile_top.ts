// deno-lint-ignore-file no-console
/**
 * The functions a V8 CPU profile (`--cpu-prof`) spent most time in, by self time and by total
 * time (inclusive): `deno run -A bench/profile_top.ts FILE.cpuprofile [--top 40]`.
 */

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

const file = Deno.args[0]!;
const t = Deno.args.indexOf("--top");
const TOP = t >= 0 ? Number(Deno.args[t + 1]) : 40;
const profile = JSON.parse(Deno.readTextFileSync(file)) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const selfCount = new Map<number, number>();
for (const s of profile.samples) selfCount.set(s, (selfCount.get(s) ?? 0) + 1);
const total = profile.samples.length;
const label = (n: Node) => {
  const url = n.callFrame.url.replace(/^.*\/stream\//, "").replace(/^.*node_modules\//, "npm:");
  return `${n.callFrame.functionName || "(anonymous)"} ${url}:${n.callFrame.lineNumber + 1}`;
};
const self = new Map<string, number>();
const incl = new Map<string, number>();
for (const [id, count] of selfCount) {
  const n = byId.get(id)!;
  self.set(label(n), (self.get(label(n)) ?? 0) + count);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const l = label(byId.get(at)!);
    if (seen.has(l)) continue;
    seen.add(l);
    incl.set(l, (incl.get(l) ?? 0) + count);
  }
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n## ${title} (${total} samples)`);
  for (const [l, c] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`${(100 * c / total).toFixed(1).padStart(5)}%  ${l}`);
  }
};
show("self", self);
show("total", incl);
