/**
 * The admission document `queries/slots`: the ids holding a running slot, those queued and those
 * storing their result, each with its server. The decisions on it are pure functions (who is
 * admitted, who is promoted, who is handed a slot); `SlotBook` changes it by compare-and-swap,
 * batching the changes a server asks for meanwhile into one commit.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { decodeJson, encodeJson, SLOTS } from "./keys.ts";
import {
  type CommitEntry,
  MAX_COMMIT_KEYS,
  type Storage,
  type StorageCoordination,
} from "../../engine/mod.ts";

/** Attempts of a compare-and-swap of the slots before giving up. */
export const SLOT_ATTEMPTS = 200;

/** One query in the admission document. */
export interface Slot {
  readonly id: string;
  readonly server: string;
  /** When it was admitted (the admitting server's clock): the queue's order. */
  readonly at: number;
}

export interface Slots {
  readonly running: readonly Slot[];
  readonly queued: readonly Slot[];
  /** SUCCEEDED on their server, their result being stored: no longer counted as running. */
  readonly storing?: readonly Slot[];
}

export const NO_SLOTS: Slots = { running: [], queued: [] };

export type Admission = "run" | "queue" | "full";

export interface SlotLimits {
  readonly maxRunning: number;
  readonly maxQueued: number;
}

/**
 * Where a new query goes: a free running slot only when no query waits (those go first: their
 * servers move them in), else the queue while it has room, else nowhere.
 */
export function admitSlot(
  slots: Slots,
  slot: Slot,
  limits: SlotLimits,
): { readonly decision: Admission; readonly slots: Slots } {
  const free = slots.running.length < limits.maxRunning;
  if (free && slots.queued.length === 0) {
    return { decision: "run", slots: { ...slots, running: [...slots.running, slot] } };
  }
  if (free || slots.queued.length < limits.maxQueued) {
    return { decision: "queue", slots: { ...slots, queued: [...slots.queued, slot] } };
  }
  return { decision: "full", slots };
}

/**
 * The queued queries of `mine` that may run now: only the first `free` of the shared queue may,
 * whoever holds them, so a server never runs its own ahead of other servers' older ones.
 */
export function promotable(
  slots: Slots,
  mine: ReadonlySet<string>,
  maxRunning: number,
): Slot[] {
  const free = maxRunning - slots.running.length;
  if (free <= 0 || mine.size === 0) return [];
  return slots.queued.slice(0, free).filter((s) => mine.has(s.id));
}

/** The slots with `moved` running instead of queued. */
export function promoted(slots: Slots, moved: readonly Slot[]): Slots {
  const taken = new Set(moved.map((s) => s.id));
  return {
    ...slots,
    running: [...slots.running, ...moved],
    queued: slots.queued.filter((s) => !taken.has(s.id)),
  };
}

/** The slots with `queryId` storing its result rather than running, or undefined if not running. */
export function storing(slots: Slots, queryId: string): Slots | undefined {
  const slot = slots.running.find((s) => s.id === queryId);
  if (!slot) return undefined;
  return {
    ...slots,
    running: slots.running.filter((s) => s !== slot),
    storing: [...(slots.storing ?? []), slot],
  };
}

/** The slots without `ids`, or undefined when none of them is there. */
export function without(slots: Slots, ids: ReadonlySet<string>): Slots | undefined {
  const running = slots.running.filter((s) => !ids.has(s.id));
  const queued = slots.queued.filter((s) => !ids.has(s.id));
  const storing = (slots.storing ?? []).filter((s) => !ids.has(s.id));
  if (
    running.length === slots.running.length && queued.length === slots.queued.length &&
    storing.length === (slots.storing ?? []).length
  ) {
    return undefined;
  }
  return { running, queued, storing };
}

/** A queued query handed the slot of one that ended; `ended` says it ended meanwhile. */
export type HandOver = Slot & { readonly ended: () => boolean };

/** The slots with `next` running (and no longer queued; not running if it has already ended). */
export function withNext(slots: Slots, next: HandOver): Slots {
  const { id, server, at } = next;
  const running = slots.running.filter((s) => s.id !== id);
  return {
    ...slots,
    running: next.ended() ? running : [...running, { id, server, at }],
    queued: slots.queued.filter((s) => s.id !== id),
  };
}

/** Every query of the slots: running, queued and storing its result. */
export function allSlots(slots: Slots): Slot[] {
  return [...slots.running, ...slots.queued, ...(slots.storing ?? [])];
}

/** A change of the slots: the new slots and the keys written with them, or nothing to do. */
export type SlotChange = (
  slots: Slots,
) => { readonly slots: Slots; readonly extra: readonly CommitEntry[] } | undefined;

export type SlotOutcome =
  | { readonly applied: true; readonly version: string | null }
  | { readonly applied: false };

export interface SlotOp {
  readonly change: SlotChange;
  resolve(outcome: SlotOutcome): void;
  reject(error: unknown): void;
  /** A promotion op (one rides on every commit while the server has queued queries). */
  readonly promotion?: boolean;
}

/** The document `queries/slots`, changed by compare-and-swap in batches. */
export class SlotBook {
  readonly #ops: SlotOp[] = [];
  #flushing = false;

  constructor(
    readonly storage: Storage,
    /** An op added to each commit that has none (the server's promotion), or undefined. */
    readonly rider: () => SlotOp | undefined = () => undefined,
  ) {}

  async read(): Promise<{ value: Slots; version: string | null }> {
    const stored = await this.storage.get(SLOTS);
    if (!stored) return { value: NO_SLOTS, version: null };
    return { value: decodeJson(stored) as Slots, version: stored.version };
  }

  /**
   * Changes the slots by compare-and-swap, with the op's `extra` keys in the same commit. The
   * changes asked for meanwhile by other queries of this server go in one commit (up to
   * MAX_COMMIT_KEYS keys), so that a busy server does not race itself for the one key; a commit
   * that lost to another server is retried from the slots as they are then. `change` is called
   * again on each retry; undefined: nothing to do (`applied: false`). A conflict on an extra key
   * (its expected version) leaves that op out: `applied: false`.
   */
  change(change: SlotChange): Promise<SlotOutcome> {
    const { promise, resolve, reject } = Promise.withResolvers<SlotOutcome>();
    this.push({ change, resolve, reject });
    return promise;
  }

  /** Queues an op for the next commit. */
  push(op: SlotOp): void {
    this.#ops.push(op);
    if (!this.#flushing) this.#flush();
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#ops.length > 0) {
        // Each op writes at most one key besides the slots.
        const batch = this.#ops.splice(0, MAX_COMMIT_KEYS - 1);
        if (!batch.some((op) => op.promotion)) {
          const rider = this.rider();
          if (rider) batch.push(rider);
        }
        await this.#commitOps(batch).catch((e) => batch.forEach((op) => op.reject(e)));
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #commitOps(ops: SlotOp[]): Promise<void> {
    const coordination = this.storage.coordination;
    if (coordination) return await this.#commitLocked(ops, coordination);
    let pending = ops;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === SLOT_ATTEMPTS) {
        throw new Error("the shared query slots kept changing: too many servers at once");
      }
      const read = await this.read();
      const plan = planCommit(read, pending);
      if (plan.applied.length === 0) return;
      if (plan.entries.length === 0) {
        plan.applied.forEach((op) => op.resolve({ applied: true, version: null }));
        return;
      }
      const written = await this.storage.commit(plan.entries);
      if (written.ok) {
        // In KV every key of a commit gets the commit's version (the files storage is not shared).
        plan.applied.forEach((op) => op.resolve({ applied: true, version: written.version }));
        return;
      }
      const lost = written.conflict.join("/");
      if (lost !== SLOTS.join("/")) {
        pending = dropLoser(plan, lost);
        continue;
      }
      pending = plan.applied;
      await sleep(Math.random() * 5 * Math.min(attempt + 1, 10));
    }
  }

  /**
   * The same with a storage that locks (PostgreSQL): the slots are read and written while every
   * other server's update of them waits, so the slots never conflict; only an op's own key can
   * (that op is out, the others go again). A change that frees a slot or leaves the queue is
   * signalled on the channel `slots`, so that servers with queued queries look at once.
   */
  async #commitLocked(ops: SlotOp[], coordination: StorageCoordination): Promise<void> {
    let pending = ops;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === SLOT_ATTEMPTS) {
        throw new Error("the shared query slots kept changing: too many servers at once");
      }
      let plan: Plan | undefined;
      const written = await coordination.update(SLOTS, (stored) => {
        const read = { value: stored ? decodeJson(stored) as Slots : NO_SLOTS, version: null };
        plan = planCommit(read, pending, true);
        return plan.entries.length > 0 ? plan.entries : undefined;
      });
      if (plan === undefined || plan.applied.length === 0) return;
      const done = plan;
      if (written === null || written.ok) {
        const version = written?.version ?? null;
        done.applied.forEach((op) => op.resolve({ applied: true, version }));
        if (done.freed) coordination.notify(SLOTS_CHANNEL).catch(() => {});
        return;
      }
      pending = dropLoser(done, written.conflict.join("/"));
    }
  }
}

/** The channel on which a freed slot is signalled (Storage.coordination). */
export const SLOTS_CHANNEL = "slots";

/** What a commit of the slots writes for a batch of ops. */
interface Plan {
  /** The ops that changed something (the others are resolved `applied: false`). */
  readonly applied: SlotOp[];
  readonly entries: CommitEntry[];
  /** Which op wrote which key besides the slots. */
  readonly writers: Map<string, SlotOp>;
  /** Whether a running slot or a place in the queue was given up. */
  readonly freed: boolean;
}

/**
 * The entries of one commit of `pending` over the slots `read`: each op's change applied in
 * turn, the slots written with the version read expected (null: they must not exist), or with
 * none when `locked` (the caller holds them).
 */
function planCommit(
  read: { readonly value: Slots; readonly version: string | null },
  pending: readonly SlotOp[],
  locked = false,
): Plan {
  let slots = read.value;
  const applied: SlotOp[] = [];
  const entries: CommitEntry[] = [];
  const writers = new Map<string, SlotOp>();
  for (const op of pending) {
    const next = op.change(slots);
    if (next === undefined) continue;
    slots = next.slots;
    applied.push(op);
    entries.push(...next.extra);
    for (const e of next.extra) writers.set(e.key.join("/"), op);
  }
  for (const op of pending) {
    if (!applied.includes(op)) op.resolve({ applied: false });
  }
  if (slots !== read.value) {
    entries.unshift({
      key: SLOTS,
      value: encodeJson(slots),
      ...(locked ? {} : { expectedVersion: read.version }),
    });
  }
  // Deletes first: in KV every key of a commit gets the commit's version, which the storage
  // answers as its last entry's, and null when that entry is a delete.
  entries.sort((a, b) => (a.value === null ? 0 : 1) - (b.value === null ? 0 : 1));
  const freed = slots.running.length < read.value.running.length ||
    slots.queued.length < read.value.queued.length;
  return { applied, entries, writers, freed };
}

/** The ops of a plan to try again without the one whose own key `lost` changed. */
function dropLoser(plan: Plan, lost: string): SlotOp[] {
  const loser = plan.writers.get(lost);
  if (!loser) throw new Error(`a commit of the shared slots failed on '${lost}'`);
  loser.resolve({ applied: false });
  return plan.applied.filter((op) => op !== loser);
}
