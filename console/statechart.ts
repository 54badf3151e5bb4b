/**
 * A statechart in SVG from a machine definition as XState's `machine.toJSON()` gives it (served
 * by `GET /machines`). The top-level states stand in one row, ordered by their longest distance
 * from the initial state; a compound state holds its substates as boxes, the transitions between
 * them drawn inside it. Every transition between top-level states is routed orthogonally: up from
 * its source's top to a lane above the row and down into its target (forward, left to right), or
 * under the row (backward). Each lane carries edges whose spans, labels included, do not overlap,
 * so no label overlaps another or runs under a box. Labels are monospace, so their widths are
 * known before they are drawn. `transitions()` lists every transition, for the table beside it.
 */

import { svg } from "./dom.ts";

interface TransitionJson {
  readonly target?: readonly string[];
  readonly guard?: string | { readonly type?: string };
  readonly delay?: string | number;
}

interface StateJson {
  readonly key: string;
  readonly id: string;
  readonly states?: Readonly<Record<string, StateJson>>;
  readonly on?: Readonly<Record<string, readonly TransitionJson[]>>;
  readonly initial?: { readonly target: readonly string[] };
}

export type MachineJson = StateJson;

/** One transition of a machine, for the list. */
export interface Transition {
  /** The state it leaves (`RUNNING.cancelling`), or "(any state)" for the machine's own. */
  readonly from: string;
  readonly event: string;
  /** The state it enters, or "(stays)" when it only runs actions. */
  readonly to: string;
  /** The guard's name, when it has one. */
  readonly guard?: string;
  /** The delay's name of an `after` transition. */
  readonly delay?: string;
}

const BOX_W = 132;
const GAP = 30;
const HEADER = 26;
const CHILD_H = 26;
const CHILD_GAP = 22;
const ATOMIC_H = 46;
const LANE = 18;
/** A monospace 11px font (console.css): its advance per character, rounded up, and padding. */
const CHAR_W = 6.8;
const LABEL_PAD = 6;
const MARGIN = 24;

/** The state path below the machine: `#query.RUNNING.working` is `RUNNING.working`. */
function pathOf(target: string, machine: string): string {
  const id = target.replace(/^#/, "");
  return id.startsWith(machine + ".") ? id.slice(machine.length + 1) : id;
}

export function eventLabel(event: string): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(event);
  if (after) return `after ${after[1]}`;
  const invoked = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (invoked) return `${invoked[2]} ${invoked[1]}`;
  return event;
}

function guardName(g: TransitionJson["guard"]): string | undefined {
  if (g === undefined) return undefined;
  return typeof g === "string" ? g : g.type;
}

/** Every transition of `machine`, its states' in document order, then the machine's own. */
export function transitions(machine: MachineJson): Transition[] {
  const out: Transition[] = [];
  const add = (from: string, node: StateJson) => {
    for (const [event, list] of Object.entries(node.on ?? {})) {
      for (const t of list) {
        const guard = guardName(t.guard);
        const base = {
          from,
          event: eventLabel(event),
          ...(guard ? { guard } : {}),
          ...(t.delay !== undefined ? { delay: String(t.delay) } : {}),
        };
        const targets = t.target ?? [];
        if (targets.length === 0) out.push({ ...base, to: "(stays)" });
        for (const target of targets) out.push({ ...base, to: pathOf(target, machine.id) });
      }
    }
  };
  const walk = (prefix: string, node: StateJson) => {
    for (const child of Object.values(node.states ?? {})) {
      const path = prefix ? `${prefix}.${child.key}` : child.key;
      add(path, child);
      walk(path, child);
    }
  };
  walk("", machine);
  add("(any state)", machine);
  return out;
}

interface Box {
  readonly key: string;
  readonly x: number;
  readonly y: number;
  readonly h: number;
  readonly children: readonly string[];
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly label: string;
}

/** Draws `machine`; `current` is the top-level state to mark (or none). */
export function statechart(name: string, machine: MachineJson, current?: string): SVGElement {
  const states = Object.values(machine.states ?? {});
  const all = transitions(machine);
  const top = (path: string) => path.split(".")[0]!;
  // Edges between top-level states (a substate's labelled with its name), one per pair.
  const grouped = new Map<string, { from: string; to: string; events: string[] }>();
  const inner = new Map<string, { from: string; to: string; events: string[] }>();
  for (const t of all) {
    if (t.to === "(stays)" || t.from === "(any state)") continue;
    const a = top(t.from);
    const b = top(t.to);
    const within = a === b && t.from.includes(".") && t.to.includes(".");
    const bucket = within ? inner : grouped;
    const source = within ? t.from : a;
    const target = within ? t.to : b;
    const prefix = !within && t.from.includes(".")
      ? `${t.from.split(".").slice(1).join(".")}: `
      : "";
    const key = `${source}\u0000${target}\u0000${prefix}`;
    const entry = bucket.get(key) ?? { from: source, to: target, events: [] };
    const event = prefix + t.event;
    if (!entry.events.includes(event)) entry.events.push(event);
    bucket.set(key, entry);
  }
  const edges: Edge[] = [...grouped.values()].map((e) => ({
    from: e.from,
    to: e.to,
    label: mergeLabel(e.events),
  }));
  const initial = machine.initial?.target[0]
    ? top(pathOf(machine.initial.target[0], machine.id))
    : states[0]?.key;
  const rank = ranks(states.map((s) => s.key), initial, edges);
  const order = [...states].sort((a, b) =>
    (rank.get(a.key) ?? 0) - (rank.get(b.key) ?? 0) ||
    states.indexOf(a) - states.indexOf(b)
  );
  const index = new Map(order.map((s, i) => [s.key, i]));

  // Lanes: forward edges above the row, backward ones below; short spans nearest the boxes.
  const xOf = (key: string) => MARGIN + 20 + (index.get(key) ?? 0) * (BOX_W + GAP);
  const ports = new Map<string, number>();
  const portCount = new Map<string, number>();
  const side = (e: Edge): "t" | "b" =>
    index.get(e.to)! > index.get(e.from)! || e.from === e.to ? "t" : "b";
  for (const e of edges) {
    for (const k of [`${e.from}:${side(e)}`, `${e.to}:${side(e)}`]) {
      portCount.set(k, (portCount.get(k) ?? 0) + 1);
    }
  }
  const portX = (key: string, s: string) => {
    const k = `${key}:${s}`;
    const n = ports.get(k) ?? 0;
    ports.set(k, n + 1);
    return xOf(key) + ((n + 1) * BOX_W) / ((portCount.get(k) ?? 1) + 1);
  };
  const width = (label: string) => label.length * CHAR_W + 2 * LABEL_PAD;
  const spans = edges.map((e) => ({ e, s: side(e) }))
    .sort((p, q) =>
      Math.abs(index.get(p.e.to)! - index.get(p.e.from)!) -
      Math.abs(index.get(q.e.to)! - index.get(q.e.from)!)
    );
  const lanes: { t: [number, number][][]; b: [number, number][][] } = { t: [], b: [] };
  const routed: { e: Edge; s: "t" | "b"; x1: number; x2: number; lane: number; lx: number }[] = [];
  for (const { e, s } of spans) {
    let x1 = portX(e.from, s);
    let x2 = portX(e.to, s);
    if (e.from === e.to) {
      x1 = xOf(e.from) + BOX_W * 0.3;
      x2 = xOf(e.from) + BOX_W * 0.7;
    }
    const lo = Math.min(x1, x2);
    const hi = Math.max(x1, x2);
    const w = width(e.label);
    const lx = Math.max(MARGIN + w / 2, (lo + hi) / 2);
    const span: [number, number] = [Math.min(lo, lx - w / 2) - 4, Math.max(hi, lx + w / 2) + 4];
    const list = lanes[s];
    let lane = list.findIndex((used) => used.every(([a, b]) => span[1] < a || span[0] > b));
    if (lane < 0) lane = list.push([]) - 1;
    list[lane]!.push(span);
    routed.push({ e, s, x1, x2, lane, lx });
  }

  const heightOf = (s: StateJson) => {
    const n = Object.keys(s.states ?? {}).length;
    return n === 0 ? ATOMIC_H : HEADER + n * CHILD_H + (n - 1) * CHILD_GAP + 10;
  };
  const rowY = MARGIN + (lanes.t.length + 1) * LANE;
  const rowH = Math.max(ATOMIC_H, ...states.map(heightOf));
  const boxes = new Map<string, Box>(order.map((s) => [s.key, {
    key: s.key,
    x: xOf(s.key),
    y: rowY,
    h: heightOf(s),
    children: Object.keys(s.states ?? {}),
  }]));
  const bottomY = rowY + rowH;
  const rightmost = Math.max(
    xOf(order.at(-1)?.key ?? "") + BOX_W,
    ...routed.map((r) => r.lx + width(r.e.label) / 2),
  );
  const svgWidth = Math.ceil(rightmost + MARGIN);
  const svgHeight = Math.ceil(bottomY + (lanes.b.length + 1) * LANE + MARGIN);
  const markerId = `arrow-${name}`;
  const marker = `url(#${markerId})`;
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
          markerWidth: 7,
          markerHeight: 7,
          orient: "auto-start-reverse",
        },
        svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head" }),
      ),
    ),
  ];
  const edgeGroup: Element[] = [];
  for (const r of routed) {
    const from = boxes.get(r.e.from)!;
    const to = boxes.get(r.e.to)!;
    const laneY = r.s === "t" ? rowY - (r.lane + 1) * LANE : bottomY + (r.lane + 1) * LANE;
    const y1 = r.s === "t" ? from.y : from.y + from.h;
    const y2 = r.s === "t" ? to.y : to.y + to.h;
    edgeGroup.push(
      svg(
        "g",
        { class: "transition", "data-from": r.e.from, "data-to": r.e.to },
        svg("path", {
          d: `M ${r.x1} ${y1} V ${laneY} H ${r.x2} V ${y2}`,
          class: "edge",
          "marker-end": marker,
        }),
        svg("text", {
          x: r.lx,
          y: laneY - 4,
          class: "edge-label",
          "text-anchor": "middle",
        }, r.e.label),
      ),
    );
  }
  for (const s of order) {
    const b = boxes.get(s.key)!;
    const isCurrent = s.key === current;
    const childParts: Element[] = [];
    b.children.forEach((child, i) => {
      const cy = b.y + HEADER + i * (CHILD_H + CHILD_GAP);
      childParts.push(
        svg(
          "g",
          { class: "substate", "data-state": `${s.key}.${child}` },
          svg("rect", {
            x: b.x + 14,
            y: cy,
            width: BOX_W - 28,
            height: CHILD_H,
            rx: 6,
            class: "state-box",
          }),
          svg("text", {
            x: b.x + BOX_W / 2,
            y: cy + 17,
            "text-anchor": "middle",
            class: "substate-name",
          }, child),
        ),
      );
    });
    const initialChild = s.initial?.target[0]
      ? pathOf(s.initial.target[0], machine.id).split(".").at(-1)
      : undefined;
    const first = b.children.indexOf(initialChild ?? "");
    if (first >= 0) {
      childParts.push(svg("circle", {
        cx: b.x + 7,
        cy: b.y + HEADER + first * (CHILD_H + CHILD_GAP) + CHILD_H / 2,
        r: 3.5,
        class: "initial",
      }));
    }
    // Transitions between substates: an arrow down (or up) through the gap, labelled beside it.
    for (const t of inner.values()) {
      if (top(t.from) !== s.key) continue;
      const i = b.children.indexOf(t.from.split(".")[1] ?? "");
      const j = b.children.indexOf(t.to.split(".")[1] ?? "");
      if (i < 0 || j < 0 || Math.abs(i - j) !== 1) continue;
      const upper = Math.min(i, j);
      const gapTop = b.y + HEADER + upper * (CHILD_H + CHILD_GAP) + CHILD_H;
      const x = b.x + 34;
      const [ya, yb] = j > i ? [gapTop, gapTop + CHILD_GAP] : [gapTop + CHILD_GAP, gapTop];
      childParts.push(
        svg(
          "g",
          { class: "transition inner", "data-from": t.from, "data-to": t.to },
          svg("path", { d: `M ${x} ${ya} V ${yb}`, class: "edge", "marker-end": marker }),
          svg(
            "text",
            { x: x + 8, y: gapTop + CHILD_GAP / 2 + 4, class: "edge-label" },
            [
              ...t.events,
            ].join(", "),
          ),
        ),
      );
    }
    parts.push(
      svg(
        "g",
        {
          class: isCurrent ? "state current" : "state",
          "data-state": s.key,
          ...(isCurrent ? { "aria-current": "true" } : {}),
        },
        svg("title", {}, isCurrent ? `${s.key} (current)` : s.key),
        svg("rect", {
          x: b.x,
          y: b.y,
          width: BOX_W,
          height: b.h,
          rx: 10,
          class: b.children.length ? "state-box compound" : "state-box",
        }),
        svg("text", {
          x: b.x + BOX_W / 2,
          y: b.children.length ? b.y + 18 : b.y + b.h / 2 + 5,
          "text-anchor": "middle",
          class: "state-name",
        }, s.key),
        ...childParts,
      ),
    );
  }
  parts.push(...edgeGroup);
  const start = initial ? boxes.get(initial) : undefined;
  if (start) {
    parts.push(
      svg("circle", { cx: start.x - 14, cy: start.y + 18, r: 5, class: "initial" }),
      svg("path", {
        d: `M ${start.x - 9} ${start.y + 18} H ${start.x}`,
        class: "edge",
        "marker-end": marker,
      }),
    );
  }
  return svg(
    "svg",
    {
      viewBox: `0 0 ${svgWidth} ${svgHeight}`,
      width: svgWidth,
      height: svgHeight,
      role: "img",
      "aria-label": `The ${name} machine` + (current ? `, current state ${current}` : ""),
      class: "statechart",
      "data-machine": name,
    },
    ...parts,
  );
}

/** The events of one edge: at most three named, then how many more (the list has them all). */
function mergeLabel(events: readonly string[]): string {
  // Events of one substate share its prefix once: "cancelling: A, B".
  const prefix = /^[^:]+: /.exec(events[0] ?? "")?.[0] ?? "";
  const names = prefix && events.every((e) => e.startsWith(prefix))
    ? events.map((e) => e.slice(prefix.length))
    : [...events];
  const shown = names.length > 3 ? [...names.slice(0, 2), `+${names.length - 2} more`] : names;
  return prefix + shown.join(", ");
}

/** Longest distance from `initial` along edges that do not close a cycle. */
function ranks(
  keys: readonly string[],
  initial: string | undefined,
  edges: readonly Edge[],
): Map<string, number> {
  const next = new Map<string, string[]>(keys.map((k) => [k, []]));
  for (const { from, to } of edges) if (from !== to) next.get(from)?.push(to);
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
