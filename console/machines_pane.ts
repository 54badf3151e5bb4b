/**
 * The state machines the server runs (`GET /machines`, their own definitions), drawn as
 * statecharts (substates inside their state, labels routed clear of each other): the query
 * machine with the followed query's state marked and moving live and its state changes listed
 * with their times, the supervisor with its queue numbers, the connector machine; under each, its
 * transitions listed (from, event, to, guard, delay).
 */

import { apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";
import { type MachineJson, statechart, transitions } from "./statechart.ts";

/** What the machines' named delays are (actors/query_machine.ts, connector_machine.ts). */
const DELAYS: Readonly<Record<string, string>> = {
  RETENTION: "query.retention after the result was last read",
  STOP_GRACE: "the engine's grace to stop (5 s)",
  nextToken: "until the token bucket's next token",
};

/**
 * A machine's drawing (scrolled sideways when wider than the page) and its transitions, built
 * once; `draw` redraws the chart only when the current state changed (the pane refreshes every
 * second: an open list and the scroll position stay).
 */
function machineFigure(name: string, machine: MachineJson) {
  const list = transitions(machine);
  const drawing = h("div", {
    className: "machine-drawing",
    tabindex: "0",
    role: "group",
    "aria-label": `The ${name} machine, drawn`,
  });
  let drawn: string | undefined | null = null;
  const parts = [
    drawing,
    h(
      "details",
      { className: "transitions" },
      h("summary", {}, `Transitions of the ${name} machine (${list.length})`),
      h(
        "table",
        { "aria-label": `Transitions of the ${name} machine` },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["From", "Event", "To", "Guard", "After"].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        h(
          "tbody",
          {},
          ...list.map((t) =>
            h(
              "tr",
              {},
              h("td", {}, t.from),
              h("td", {}, t.event),
              h("td", {}, t.to),
              h("td", {}, t.guard ?? ""),
              h("td", {}, t.delay ? `${t.delay}: ${DELAYS[t.delay] ?? "a delay"}` : ""),
            )
          ),
        ),
      ),
    ),
  ];
  return {
    draw(current: string | undefined) {
      if (drawn !== current) fill(drawing, statechart(name, machine, current));
      drawn = current;
      return parts;
    },
  };
}

interface Machines {
  readonly machines: Readonly<Record<"query" | "supervisor" | "connector", MachineJson>>;
  readonly live: {
    readonly supervisor?: {
      held: number;
      waiting: number;
      active: number;
      maxRunning: number;
      maxQueued: number;
    };
    /** Admins only. */
    readonly connectors?: readonly {
      key: string;
      state: string;
      waiting: number;
      spent: number;
      limit: number;
      unitMs: number;
    }[];
  };
}

const REFRESH_MS = 1000;

export function machinesPane() {
  const queryBox = h("figure", { className: "machine" });
  const supervisorBox = h("figure", { className: "machine" });
  const connectorBox = h("figure", { className: "machine" });
  const error = h("p", { role: "alert", className: "error" });
  const element = h(
    "section",
    { "aria-label": "Machines" },
    h("h2", {}, "State machines"),
    queryBox,
    supervisorBox,
    connectorBox,
    error,
  );
  let machines: Machines | null = null;
  const figures = new Map<string, ReturnType<typeof machineFigure>>();
  const figure = (name: string, machine: MachineJson, current: string | undefined) => {
    let f = figures.get(name);
    if (!f) figures.set(name, f = machineFigure(name, machine));
    return f.draw(current);
  };
  let query: { id: string; state: string } | null = null;
  /** The followed query's state changes with the server's times (its status' `stateChanges`). */
  let changes: readonly { millis: number; from: string; to: string }[] = [];
  let timer: ReturnType<typeof setInterval> | undefined;

  const draw = () => {
    if (!machines) return;
    const { query: q, supervisor, connector } = machines.machines;
    fill(
      queryBox,
      h(
        "figcaption",
        {},
        query
          ? `Query ${query.id}: ${query.state}`
          : "The query machine (run or open a query to follow one)",
      ),
      ...figure("query", q, query?.state),
      changes.length
        ? h(
          "ol",
          { className: "state-changes", "aria-label": `State changes of query ${query?.id}` },
          ...changes.map((c, i) =>
            h(
              "li",
              {},
              `${new Date(c.millis).toLocaleTimeString([], { hour12: false })}.${
                String(c.millis % 1000).padStart(3, "0")
              } ${c.from} → ${c.to}`,
              i > 0 ? ` (+${((c.millis - changes[i - 1]!.millis) / 1000).toFixed(3)} s)` : "",
            )
          ),
        )
        : null,
    );
    const live = machines.live.supervisor;
    fill(
      supervisorBox,
      h(
        "figcaption",
        {},
        live
          ? `The supervisor: ${live.held} queries held, ${live.active} of ${live.maxRunning} running, ${live.waiting} of ${live.maxQueued} waiting`
          : "The supervisor",
      ),
      ...figure("supervisor", supervisor, "supervising"),
    );
    const pool = machines.live.connectors ?? [];
    fill(
      connectorBox,
      h(
        "figcaption",
        {},
        pool.length === 0
          ? "A connector (one per cloud API and tenant or store): none running"
          : "Connectors",
      ),
      ...figure("connector", connector, pool[0]?.state),
      pool.length
        ? h(
          "ul",
          { className: "connectors", "aria-label": "Connectors" },
          ...pool.map((p) =>
            h(
              "li",
              {},
              `${p.key}: ${p.state}, ${p.waiting} waiting, ${p.spent} of ${p.limit} tokens per ${
                p.unitMs / 1000
              } s spent`,
            )
          ),
        )
        : null,
    );
  };
  const load = async () => {
    try {
      machines = await apiJson<Machines>("/machines");
      fill(error);
      draw();
    } catch (e) {
      fill(error, (e as Error).message);
    }
  };
  return {
    element,
    /** The followed query's state, as its events stream tells it. */
    setQueryState(id: string, state: string) {
      if (query?.id !== id) changes = [];
      query = { id, state };
      // The changes so far with their times, as the server recorded them.
      apiJson<{ stateChanges?: typeof changes }>(`/queries/${encodeURIComponent(id)}`)
        .then((status) => {
          if (query?.id !== id) return;
          changes = status.stateChanges ?? [];
          draw();
        }, () => {});
      draw();
    },
    setVisible(visible: boolean) {
      clearInterval(timer);
      if (!visible) return;
      load();
      timer = setInterval(load, REFRESH_MS);
    },
  };
}
