/**
 * Pass: each source that converts only the fields asked for (`takes.fields`) is told which
 * fields the rest of the plan reads: what its consumers read, plus what a pushed filter reads.
 * Nodes that compute new rows (project, aggregate) start the set afresh from what they read;
 * filters, sorts and unnests add theirs; a save, and whatever is opened for its effect, reads all.
 *
 *   project client as client              project client as client
 *     source PARSE(...)           →         source PARSE(...) reads(client)
 */

import { assertNever } from "../../front/ast.ts";
import type { PlanNode } from "../../plan/plan.ts";
import { FieldReads } from "../expressions.ts";

/**
 * Field names in the order found, each with the member paths read below it (FieldReads), or
 * null: all of them. A set that is not a FieldReads reads its fields whole.
 */
type Needed = ReadonlySet<string> | null;

export function neededFields(root: PlanNode): PlanNode {
  return withNeeded(root, null);
}

function plus(needed: Needed, reads: ReadonlySet<string> | null): Needed {
  if (needed === null || reads === null) return null;
  const out = new FieldReads();
  for (const set of [needed, reads]) {
    for (const name of set) {
      const paths = set instanceof FieldReads ? set.paths.get(name) ?? null : null;
      if (paths === null) out.note(name, null);
      else for (const p of paths) out.note(name, p);
    }
  }
  return out;
}

/** The fields of `wanted` read only through member paths, with those paths. */
function pathsOf(wanted: ReadonlySet<string>, fields: readonly string[]) {
  if (!(wanted instanceof FieldReads)) return undefined;
  const out = new Map<string, readonly (readonly string[])[]>();
  for (const name of fields) {
    const paths = wanted.paths.get(name);
    if (paths) out.set(name, paths);
  }
  return out.size > 0 ? out : undefined;
}

/** `node` rebuilt for consumers that read `needed` of its output fields. */
function withNeeded(node: PlanNode, needed: Needed): PlanNode {
  switch (node.kind) {
    case "values":
    case "table":
      return node;
    case "source": {
      if (!node.takes.fields) return node;
      const wanted = node.filter ? plus(needed, node.filter.reads) : needed;
      if (wanted === null) return { ...node, fields: null };
      // A closed schema lists every field the source can give (a union above asks for all of
      // its inputs' fields); an open one may give any.
      const fields = node.open
        ? [...wanted]
        : [...wanted].filter((name) => node.schema.some((f) => f.name === name));
      // Member paths matter only to sources of nested data (READ_JSON's open schema).
      const paths = node.open ? pathsOf(wanted, fields) : undefined;
      return { ...node, fields, ...(paths ? { paths } : {}) };
    }
    case "view":
    case "limit":
      return { ...node, input: withNeeded(node.input, needed) };
    case "filter":
    case "sort":
      return { ...node, input: withNeeded(node.input, plus(needed, node.reads)) };
    case "window": {
      // Its columns replace input fields of their names: the input need not give them.
      const own = new Set(node.outputs.map((c) => c.name));
      const others = needed === null ? null : new Set([...needed].filter((n) => !own.has(n)));
      return { ...node, input: withNeeded(node.input, plus(others, node.reads)) };
    }
    case "unnest": {
      // The element replaces an input field of its name: the input need not give it.
      const others = needed === null ? null : new Set([...needed].filter((n) => n !== node.name));
      return { ...node, input: withNeeded(node.input, plus(others, node.reads)) };
    }
    case "project":
    case "aggregate":
      return { ...node, input: withNeeded(node.input, node.reads) };
    case "join": {
      if (node.rightNames === null) {
        // An open side names its output fields row by row: both read all.
        return { ...node, left: withNeeded(node.left, null), right: withNeeded(node.right, null) };
      }
      const rightNames = node.rightNames;
      const leftNames = new Set(node.left.schema.map((f) => f.name));
      const leftNeeded = needed === null
        ? null
        : new Set([...needed].filter((n) => leftNames.has(n)));
      const rightNeeded = needed === null ? null : new Set(
        [...rightNames].filter(([, to]) => needed.has(to)).map(([from]) => from),
      );
      return {
        ...node,
        left: withNeeded(node.left, plus(leftNeeded, node.leftReads)),
        right: withNeeded(node.right, plus(rightNeeded, node.rightReads)),
      };
    }
    case "union":
      return { ...node, inputs: node.inputs.map((i) => withNeeded(i, needed)) };
    case "save":
      return { ...node, input: withNeeded(node.input, null) };
    case "after":
      return {
        ...node,
        before: node.before.map((b) => withNeeded(b, null)),
        input: withNeeded(node.input, needed),
      };
    default:
      return assertNever(node);
  }
}
