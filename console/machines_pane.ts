/**
 * The state machines the server runs (`GET /machines`, their own definitions), drawn as
 * statecharts: the query machine with the followed query's state marked and moving live, the
 * supervisor with its queue numbers, the connector machine.
 */

import { apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";
import { type MachineJson, statechart } from "./statechart.ts";

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
  let query: { id: string; state: string } | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;

  const draw = () => {
    if (!machines) return;
    const { query: q, supervisor, connector } = machines.machines;
    fill(
      queryBox,
      statechart("query", q, query?.state),
      h(
        "figcaption",
        {},
        query
          ? `Query ${query.id}: ${query.state}`
          : "The query machine (run or open a query to follow one)",
      ),
    );
    const live = machines.live.supervisor;
    fill(
      supervisorBox,
      statechart("supervisor", supervisor, "supervising"),
      h(
        "figcaption",
        {},
        live
          ? `The supervisor: ${live.held} queries held, ${live.active} of ${live.maxRunning} running, ${live.waiting} of ${live.maxQueued} waiting`
          : "The supervisor",
      ),
    );
    const pool = machines.live.connectors ?? [];
    fill(
      connectorBox,
      statechart("connector", connector, pool[0]?.state),
      h(
        "figcaption",
        {},
        pool.length === 0
          ? "A connector (one per cloud API and tenant or store): none running"
          : "Connectors",
      ),
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
      query = { id, state };
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
