/**
 * A statechart in SVG from a machine definition as XState's `machine.toJSON()` gives it (served
 * by `GET /machines`): top-level states in columns by their longest distance from the initial
 * state, their child states listed inside, one arrow per pair of states labelled with the
 * events, and the current state marked.
 */

import { svg } from "./dom.ts";

interface StateJson {
  readonly key: string;
  readonly id: string;
  readonly states: Readonly<Record<string, StateJson>>;
  readonly on: Readonly<Record<string, readonly { target?: readonly string[] }[]>>;
  readonly initial?: { readonly target: readonly string[] };
}

export type MachineJson = StateJson;

const BOX_W = 150;
const BOX_H = 54;
const COL_GAP = 80;
const ROW_GAP = 30;

/** Draws `machine`; `current` is the top-level state to mark (or none). */
export function statechart(name: string, machine: MachineJson, current?: string): SVGElement {
  const states = Object.values(machine.states);
  const topOf = (id: string) => {
    const path = id.replace(/^#/, "").split(".");
    return path[1] ?? path[0];
  };
  // Edges between top-level states, child states' transitions counted for their parent.
  const edges = new Map<string, Set<string>>();
  const collect = (top: string, node: StateJson) => {
    for (const [event, transitions] of Object.entries(node.on ?? {})) {
      for (const t of transitions) {
        for (const target of t.target ?? []) {
          const to = topOf(target);
          const key = `${top}\u0000${to}`;
          if (!edges.has(key)) edges.set(key, new Set());
          edges.get(key)!.add(eventLabel(event));
        }
      }
    }
    for (const child of Object.values(node.states ?? {})) collect(top, child);
  };
  for (const s of states) collect(s.key, s);
  const initial = machine.initial?.target[0] ? topOf(machine.initial.target[0]) : states[0]?.key;
  const rank = ranks(states.map((s) => s.key), initial, edges);
  const columns: string[][] = [];
  for (const s of states) (columns[rank.get(s.key) ?? 0] ??= []).push(s.key);
  const pos = new Map<string, { x: number; y: number }>();
  columns.forEach((col, c) =>
    col.forEach((key, r) =>
      pos.set(key, { x: 20 + c * (BOX_W + COL_GAP), y: 40 + r * (BOX_H + ROW_GAP) })
    )
  );
  const width = 40 + columns.length * (BOX_W + COL_GAP);
  const height = 60 + Math.max(...columns.map((c) => c.length)) * (BOX_H + ROW_GAP);
  const markerId = `arrow-${name}`;
  const parts: Element[] = [
    svg(
      "defs",
      {},
      svg(
        "marker",
        {
          id: markerId,
          viewBox: "0 0 10 10",
          refX: 10,
          refY: 5,
          markerWidth: 8,
          markerHeight: 8,
          orient: "auto-start-reverse",
        },
        svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head" }),
      ),
    ),
  ];
  const fromSource = new Map<string, number>();
  for (const [key, events] of edges) {
    const [from, to] = key.split("\u0000") as [string, string];
    const a = pos.get(from);
    const b = pos.get(to);
    if (!a || !b) continue;
    const label = [...events].join(", ");
    if (from === to) {
      const x = a.x + BOX_W / 2;
      parts.push(
        svg("path", {
          d: `M ${x - 20} ${a.y} C ${x - 30} ${a.y - 30}, ${x + 30} ${a.y - 30}, ${x + 20} ${a.y}`,
          class: "edge",
          "marker-end": `url(#${markerId})`,
        }),
        svg("text", { x, y: a.y - 26, class: "edge-label", "text-anchor": "middle" }, label),
      );
      continue;
    }
    const x1 = a.x + BOX_W;
    const y1 = a.y + BOX_H / 2;
    const x2 = b.x < a.x ? b.x + BOX_W : b.x;
    const y2 = b.y + BOX_H / 2;
    const bend = b.x <= a.x ? 60 : 0;
    const nth = fromSource.get(from) ?? 0;
    fromSource.set(from, nth + 1);
    const along = 0.2 + 0.12 * (nth % 4);
    parts.push(
      svg("path", {
        d: `M ${x1} ${y1} C ${x1 + 40} ${y1 + bend}, ${x2 - 40} ${y2 + bend}, ${x2} ${y2}`,
        class: "edge",
        "marker-end": `url(#${markerId})`,
      }),
      svg("text", {
        x: x1 + (x2 - x1) * along + 4,
        y: y1 + (y2 - y1) * along - 3 + bend / 2,
        class: "edge-label",
        "text-anchor": "middle",
      }, label),
    );
  }
  for (const s of states) {
    const p = pos.get(s.key)!;
    const isCurrent = s.key === current;
    const children = Object.keys(s.states ?? {});
    parts.push(
      svg(
        "g",
        {
          class: isCurrent ? "state current" : "state",
          "data-state": s.key,
          ...(isCurrent ? { "aria-current": "true" } : {}),
        },
        svg("title", {}, isCurrent ? `${s.key} (current)` : s.key),
        svg("rect", { x: p.x, y: p.y, width: BOX_W, height: BOX_H, rx: 10 }),
        svg("text", {
          x: p.x + BOX_W / 2,
          y: p.y + 22,
          "text-anchor": "middle",
          class: "state-name",
        }, s.key),
        children.length
          ? svg(
            "text",
            { x: p.x + BOX_W / 2, y: p.y + 42, "text-anchor": "middle", class: "state-children" },
            children.join(" · "),
          )
          : null,
      ),
    );
  }
  if (initial && pos.get(initial)) {
    const p = pos.get(initial)!;
    parts.push(
      svg("circle", { cx: p.x - 12, cy: p.y + BOX_H / 2, r: 5, class: "initial" }),
    );
  }
  return svg(
    "svg",
    {
      viewBox: `0 0 ${width} ${height}`,
      width,
      role: "img",
      "aria-label": `The ${name} machine` + (current ? `, current state ${current}` : ""),
      class: "statechart",
      "data-machine": name,
    },
    ...parts,
  );
}

function eventLabel(event: string): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(event);
  if (after) return `after ${after[1]}`;
  const invoked = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (invoked) return `${invoked[2]} ${invoked[1]}`;
  return event;
}

/** Longest distance from `initial` along edges that do not close a cycle. */
function ranks(
  keys: readonly string[],
  initial: string | undefined,
  edges: Map<string, Set<string>>,
): Map<string, number> {
  const next = new Map<string, string[]>(keys.map((k) => [k, []]));
  for (const key of edges.keys()) {
    const [from, to] = key.split("\u0000") as [string, string];
    if (from !== to) next.get(from)?.push(to);
  }
  // Drop back edges found by a depth-first walk from the initial state.
  const onPath = new Set<string>();
  const seen = new Set<string>();
  const forward = new Map<string, string[]>(keys.map((k) => [k, []]));
  const walk = (k: string) => {
    seen.add(k);
    onPath.add(k);
    for (const t of next.get(k) ?? []) {
      if (onPath.has(t)) continue;
      forward.get(k)!.push(t);
      if (!seen.has(t)) walk(t);
    }
    onPath.delete(k);
  };
  if (initial) walk(initial);
  for (const k of keys) if (!seen.has(k)) walk(k);
  const rank = new Map<string, number>();
  const depth = (k: string, trail: Set<string>): number => {
    if (rank.has(k)) return rank.get(k)!;
    let best = 0;
    for (const [from, targets] of forward) {
      if (targets.includes(k) && !trail.has(from)) {
        best = Math.max(best, depth(from, new Set([...trail, k])) + 1);
      }
    }
    rank.set(k, best);
    return best;
  };
  for (const k of keys) depth(k, new Set());
  return rank;
}
