/**
 * Mermaid diagrams of the machines, generated from the machine objects themselves (so that
 * the pictures cannot drift from the code): `deno task statecharts` writes
 * `docs/statecharts/<name>.md`; statecharts_test.ts fails when the committed files are stale.
 */

import type { AnyStateMachine, AnyStateNode } from "xstate";
import { connectorMachine } from "./connector_machine.ts";
import { queryMachine } from "./query_machine.ts";
import { supervisorMachine } from "./supervisor.ts";

export const MACHINES: Readonly<Record<string, AnyStateMachine>> = {
  query: queryMachine,
  supervisor: supervisorMachine,
  connector: connectorMachine,
};

/** The file each machine is defined in, for the pages' headers. */
const SOURCES: Readonly<Record<string, string>> = {
  query: "actors/query_machine.ts",
  supervisor: "actors/supervisor.ts",
  connector: "actors/connector_machine.ts",
};

export const STATECHARTS_DIR = new URL("../docs/statecharts/", import.meta.url);

/** The Markdown page with the Mermaid `stateDiagram-v2` of a machine. */
export function renderStatechart(name: string, machine: AnyStateMachine): string {
  const lines = [
    `# The ${name} machine`,
    "",
    `Generated from \`${SOURCES[name] ?? `actors/${name}.ts`}\` by ` +
    "`deno task statecharts`; do not edit.",
    "",
    "```mermaid",
    "stateDiagram-v2",
  ];
  renderNode(machine.root, "  ", lines);
  lines.push("```", "");
  return lines.join("\n");
}

function idOf(node: AnyStateNode): string {
  return node.path.length === 0 ? "root" : node.path.join("_");
}

function renderNode(node: AnyStateNode, indent: string, lines: string[]): void {
  const children = Object.values(node.states) as AnyStateNode[];
  if (children.length === 0) return;
  if (node.initial) {
    const initial = node.initial.target[0] as AnyStateNode;
    lines.push(`${indent}[*] --> ${idOf(initial)}`);
  }
  for (const child of children) {
    if (Object.keys(child.states).length > 0) {
      lines.push(`${indent}state "${child.key}" as ${idOf(child)} {`);
      renderNode(child, indent + "  ", lines);
      lines.push(`${indent}}`);
    } else if (child.path.length > 0) lines.push(`${indent}${idOf(child)} : ${child.key}`);
  }
  for (const child of children) {
    for (const [eventType, transitions] of child.transitions) {
      for (const t of transitions) {
        const label = eventLabel(eventType) + (t.guard ? ` [${guardName(t.guard)}]` : "") +
          actionsLabel(t.actions);
        const targets = (t.target ?? [child]) as AnyStateNode[];
        for (const target of targets) {
          lines.push(`${indent}${idOf(child)} --> ${idOf(target)} : ${label}`);
        }
      }
    }
    for (const t of child.always ?? []) {
      for (const target of (t.target ?? []) as AnyStateNode[]) {
        const guard = t.guard ? ` [${guardName(t.guard)}]` : "";
        lines.push(`${indent}${idOf(child)} --> ${idOf(target)} : always${guard}`);
      }
    }
  }
}

/** `xstate.after.RETENTION.query.SUCCEEDED` reads `after RETENTION`; invoke results by name. */
function eventLabel(type: string): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(type);
  if (after) return `after ${after[1]}`;
  const done = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
  if (done) return `${done[1] === "done" ? "done" : "error"}: ${done[2]!.replace(/^0\./, "")}`;
  return type;
}

/** ` / progress, warn` for named actions; inline ones are not named. */
function actionsLabel(actions: readonly unknown[]): string {
  const names = actions.flatMap((a) =>
    typeof a === "string"
      ? [a]
      : a && typeof a === "object" && "type" in a && typeof a.type === "string"
      ? [a.type]
      : []
  );
  return names.length > 0 ? ` / ${names.join(", ")}` : "";
}

function guardName(guard: unknown): string {
  if (typeof guard === "string") return guard;
  if (guard && typeof guard === "object" && "type" in guard) return String(guard.type);
  return "guard";
}

/** Writes every diagram; returns the paths written. */
export async function writeStatecharts(dir: URL = STATECHARTS_DIR): Promise<string[]> {
  await Deno.mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, machine] of Object.entries(MACHINES)) {
    const url = new URL(`${name}.md`, dir);
    await Deno.writeTextFile(url, renderStatechart(name, machine));
    written.push(url.pathname);
  }
  return written;
}

if (import.meta.main) {
  // deno-lint-ignore no-console
  for (const path of await writeStatecharts()) console.log(`wrote ${path}`);
}
