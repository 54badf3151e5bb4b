/**
 * Scheduled detections (docs/detections.md): a schedule runs a script or a Sigma rule every N
 * minutes or on a cron, over a window of event time, as a named user; each record it returns is
 * a match, alerted once.
 *
 * - **Nothing missed.** A scheduled run covers `[coveredTo - lookback, now)`: `coveredTo` is the
 *   end of the last successful run's window (kept in the storage; the first run's is `now`). A
 *   record that arrived after that run, at most `lookback` after its event time (the look-back is
 *   at least the store's lag), has an event time of at least `coveredTo - lookback`: so after
 *   downtime, a failed run, or late records, the next run reads everything it has not seen.
 * - **Nothing doubled.** Each match has a key, `<schedule>|<rule>|<record id>` (the record's
 *   `id`/`Id`/`properties.id`, else the SHA-256 of its canonical JSON); the key's mark and the
 *   alert are written in one commit that requires the mark to be absent, so overlapping windows,
 *   re-fetched hours and two servers racing alert once. Marks are kept `dedupDays`.
 * - **Cloud hours that change.** A `cloudapi://` hour's stored records change when it is fetched
 *   again (within its lag, when read after its update frequency), fetched once more later (its
 *   file archived, the log's lag raised) or when late suite content brings it records. The state
 *   remembers, per cloud hour of the schedule's sources within `lateHorizonMs` (and not before its
 *   first window), the stamp of the hour's stored fetch state (`CloudHour.stamp`) that the last run
 *   reading it whole found before reading it. A run also reads, besides its window, each hour
 *   whose stamp differs now (its records changed since: a late record, however late, is alerted
 *   when it is stored) and each hour a read would fetch (not final yet: reading it fetches its
 *   late records); the matches already alerted are duplicates. The stamps are written in the same
 *   commit as the run's record and the covered window, so a server that stops mid-run leaves the
 *   state of the last whole run.
 * - **One server per run.** A run takes the schedule's lease (compare-and-swap on
 *   `detections/leases/<id>`, for `leaseMs`) first; a server that finds it held skips the run.
 *
 * Keys: `detections/schedules/<id>`, `detections/state/<id>`, `detections/leases/<id>`,
 * `detections/runs/<id>/<start>-<run>`, `detections/seen/<id>/<hash>`,
 * `detections/suppress/<id>/<hash>`, and the outbox's `detections/outbox/<alert>`.
 *
 * The query itself is the `RunQuery` handed in (the server submits it through the supervisor as
 * the schedule's user, so it is visible as a query); the clock is handed in too (tests).
 */

import type { Storage, StorageKey } from "../engine/mod.ts";
import { type Alert, alertKey, encodeAlert } from "./alert_outbox.ts";

export interface Schedule {
  readonly id: string;
  readonly name: string;
  readonly owner: string;
  /** The user the query runs as (its rights apply). */
  readonly runAs: string;
  /** A Trawl script taking `from` and `to` (TIMESTAMP arguments), or a Sigma rule (YAML). */
  readonly script?: string;
  readonly sigma?: string;
  readonly target?: string;
  readonly store?: string;
  readonly everyMinutes?: number;
  readonly cron?: string;
  readonly lookbackMinutes: number;
  readonly enabled: boolean;
  readonly dedupDays: number;
  readonly webhook?: { readonly url: string; readonly secret: string };
  /** Alerts whose values of these fields were alerted within `forMinutes` are kept, not sent. */
  readonly suppress?: { readonly fields: readonly string[]; readonly forMinutes: number };
  readonly created: number;
}

export interface ScheduleState {
  /** The end of the last successful scheduled window. */
  readonly coveredTo?: number;
  readonly lastRunAt?: number;
  /** The start of the first scheduled window: no hour before it is the schedule's to read. */
  readonly since?: number;
  /**
   * Per cloud hour (`CloudHour.key`) within the late horizon: its stamp when a run last read it
   * whole (taken before the read, so a change during the read is read again).
   */
  readonly hours?: Readonly<Record<string, string | null>>;
}

export interface RunRecord {
  readonly id: string;
  readonly schedule: string;
  readonly kind: "scheduled" | "backfill";
  readonly from: number;
  readonly to: number;
  readonly server: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly state: "succeeded" | "failed";
  readonly queryId?: string;
  readonly matches: number;
  readonly alerts: number;
  readonly duplicates: number;
  readonly suppressed: number;
  /** Cloud hours read again besides the window (their stored records changed, or not final). */
  readonly late?: readonly { readonly from: number; readonly to: number }[];
  readonly error?: string;
}

/** One stored hour of a `cloudapi://` source (connectors/cloudapi `StoredHour`). */
export interface CloudHour {
  /** `<store>/<log>/<hour start>`. */
  readonly key: string;
  readonly hour: number;
  readonly end: number;
  /** Changes whenever the hour's stored records may have; null: never fetched. */
  readonly stamp: string | null;
  /** A read would fetch it now (never fetched, or not final and its update frequency past). */
  readonly due: boolean;
}

/** The stored cloud hours overlapping [from, to) that a schedule reads (none: no cloud source). */
export type CloudHours = (
  schedule: Schedule,
  from: number,
  to: number,
) => Promise<readonly CloudHour[]>;

interface Window {
  readonly from: number;
  readonly to: number;
}

/** What a run's query gives: its id, the rule's id and title, the records, their matched paths. */
export interface QueryOutcome {
  readonly queryId: string;
  readonly rule: { readonly id: string; readonly title?: string; readonly level?: string };
  readonly records: readonly Readonly<Record<string, unknown>>[];
  readonly matched?: (record: Readonly<Record<string, unknown>>) => readonly string[];
}

export type RunQuery = (
  schedule: Schedule,
  window: { readonly from: number; readonly to: number },
) => Promise<QueryOutcome>;

export interface SchedulerOptions {
  readonly storage: Storage;
  readonly clock: () => number;
  /** This server's name in leases and runs. */
  readonly server: string;
  readonly runQuery: RunQuery;
  readonly leaseMs?: number;
  /** How long run records are kept. */
  readonly runRetentionMs?: number;
  /** The stored cloud hours a schedule reads; none when absent. */
  readonly cloudHours?: CloudHours;
  /**
   * How far back cloud hours whose stored records changed are read again
   * (`detections.lateHorizon`); 0: never (only the look-back).
   */
  readonly lateHorizonMs?: number;
}

const ROOT = ["detections"];
export const SCHEDULES: StorageKey = [...ROOT, "schedules"];
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MINUTE = 60_000;
const DAY = 86_400_000;

const json = (v: unknown) => encoder.encode(JSON.stringify(v));
const parse = <T>(b: Uint8Array) => JSON.parse(decoder.decode(b)) as T;

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** JSON with keys sorted at every level: the same record gives the same text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return "[" + v.map(canonicalJson).join(",") + "]";
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return "{" + Object.keys(o).sort().filter((k) => o[k] !== undefined)
      .map((k) => JSON.stringify(k) + ":" + canonicalJson(o[k])).join(",") +
      "}";
  }
  return JSON.stringify(v) ?? "null";
}

/** The record's own id, else the hash of its canonical JSON. */
export async function recordIdentity(record: Readonly<Record<string, unknown>>): Promise<string> {
  const props = record.properties as Record<string, unknown> | undefined;
  for (const v of [record.id, record.Id, props?.id]) {
    if (typeof v === "string" && v !== "") return v;
  }
  return "sha256:" + await sha256(canonicalJson(record));
}

// ------------------------------------------------------------------------------------- cron

/** A five-field cron (minute hour day-of-month month day-of-week, UTC): *, n, a-b, a,b, /step. */
export function parseCron(text: string): ((t: Date) => boolean) | string {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) return `cron '${text}' needs 5 fields (minute hour day month weekday)`;
  const ranges: [number, number][] = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];
  const sets: Set<number>[] = [];
  for (let i = 0; i < 5; i++) {
    const [lo, hi] = ranges[i]!;
    const set = new Set<number>();
    for (const item of parts[i]!.split(",")) {
      const m = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(item);
      if (!m) return `cron field '${item}' is not understood`;
      const from = m[1] === "*" ? lo : Number(m[2]);
      const to = m[1] === "*" ? hi : m[3] !== undefined ? Number(m[3]) : m[4] ? hi : from;
      const step = m[4] ? Number(m[4]) : 1;
      if (from < lo || to > hi || from > to || step < 1) {
        return `cron field '${item}' is out of range ${lo}-${hi}`;
      }
      for (let v = from; v <= to; v += step) set.add(i === 4 && v === 7 ? 0 : v);
    }
    sets.push(set);
  }
  return (t) =>
    sets[0]!.has(t.getUTCMinutes()) && sets[1]!.has(t.getUTCHours()) &&
    sets[2]!.has(t.getUTCDate()) && sets[3]!.has(t.getUTCMonth() + 1) &&
    sets[4]!.has(t.getUTCDay());
}

/** When the schedule is next due after a run at `last` (epoch ms); `last` undefined: now. */
export function nextDue(schedule: Schedule, last: number | undefined, now: number): number {
  if (last === undefined) return now;
  if (schedule.cron) {
    const matches = parseCron(schedule.cron);
    if (typeof matches === "string") return Infinity;
    let t = Math.floor(last / MINUTE) * MINUTE + MINUTE;
    for (let i = 0; i < 366 * 1440; i++, t += MINUTE) if (matches(new Date(t))) return t;
    return Infinity;
  }
  return last + (schedule.everyMinutes ?? 60) * MINUTE;
}

// ------------------------------------------------------------------------------- scheduler

export class Scheduler {
  readonly #o: Required<SchedulerOptions>;

  constructor(options: SchedulerOptions) {
    this.#o = {
      leaseMs: 10 * MINUTE,
      runRetentionMs: 30 * DAY,
      cloudHours: () => Promise.resolve([]),
      lateHorizonMs: 3 * DAY,
      ...options,
    };
  }

  async schedules(): Promise<Schedule[]> {
    const out: Schedule[] = [];
    for await (const key of this.#o.storage.list(SCHEDULES)) {
      const stored = await this.#o.storage.get(key);
      if (stored) out.push(parse<Schedule>(stored.value));
    }
    return out;
  }

  async state(id: string): Promise<ScheduleState> {
    return (await this.#stateEntry(id)).state;
  }

  async #stateEntry(id: string): Promise<{ state: ScheduleState; version: string | null }> {
    const stored = await this.#o.storage.get([...ROOT, "state", id]);
    return stored
      ? { state: parse<ScheduleState>(stored.value), version: stored.version }
      : { state: {}, version: null };
  }

  /** The schedule's runs, newest first. */
  async runs(id: string, limit = 50): Promise<RunRecord[]> {
    const keys: StorageKey[] = [];
    for await (const key of this.#o.storage.list([...ROOT, "runs", id])) keys.push(key);
    const out: RunRecord[] = [];
    for (const key of keys.reverse().slice(0, limit)) {
      const stored = await this.#o.storage.get(key);
      if (stored) out.push(parse<RunRecord>(stored.value));
    }
    return out;
  }

  /** Runs every enabled schedule that is due and whose lease this server wins. */
  async tick(): Promise<RunRecord[]> {
    const done: RunRecord[] = [];
    for (const schedule of await this.schedules()) {
      if (!schedule.enabled) continue;
      const now = this.#o.clock();
      const state = await this.state(schedule.id);
      if (nextDue(schedule, state.lastRunAt, now) > now) continue;
      const run = await this.#leased(schedule, () => this.#scheduled(schedule, now));
      if (run) done.push(run);
    }
    return done;
  }

  /** A scheduled run, under the lease: its window, the cloud hours that changed, one commit. */
  async #scheduled(schedule: Schedule, now: number): Promise<RunRecord | undefined> {
    // Read again under the lease: another server may have run it meanwhile.
    const { state: fresh, version } = await this.#stateEntry(schedule.id);
    if (nextDue(schedule, fresh.lastRunAt, now) > now) return undefined;
    // Records seen by no run: an event time after coveredTo, or one up to a look-back before it
    // that arrived since.
    const main: Window = {
      from: Math.min(fresh.coveredTo ?? now, now) - schedule.lookbackMinutes * MINUTE,
      to: now,
    };
    const since = fresh.since ?? main.from;
    let hours: readonly CloudHour[] = [];
    let windows: Window[] = [main];
    let failure: string | undefined;
    if (this.#o.lateHorizonMs > 0) {
      try {
        hours = await this.#o.cloudHours(
          schedule,
          Math.max(now - this.#o.lateHorizonMs, since),
          now,
        );
        windows = lateWindows(hours, fresh.hours ?? {}, main, since);
      } catch (e) {
        failure = `the stored state of its cloud hours could not be read: ${(e as Error).message}`;
      }
    }
    const { record, succeeded } = failure === undefined
      ? await this.#evaluate(schedule, windows, "scheduled")
      : { record: this.#failed(schedule, main, "scheduled", failure), succeeded: [] };
    // An hour read whole by a window whose query succeeded is evaluated at the stamp it had
    // before; the others keep the stamp they had.
    const evaluated: Record<string, string | null> = {};
    for (const h of hours) {
      const whole = succeeded.some((w) =>
        w.from <= Math.max(h.hour, since) && w.to >= Math.min(h.end, now)
      );
      const before = fresh.hours?.[h.key];
      if (whole) evaluated[h.key] = h.stamp;
      else if (before !== undefined) evaluated[h.key] = before;
    }
    const mainDone = succeeded.includes(windows[0]!);
    const next: ScheduleState = {
      ...fresh,
      lastRunAt: now,
      since,
      hours: evaluated,
      ...(mainDone ? { coveredTo: now } : {}),
    };
    // The state and the run's record in one commit: a server stopping between them leaves both
    // as they were (the run is then done again).
    const written = await this.#o.storage.commit([
      { key: [...ROOT, "state", schedule.id], value: json(next), expectedVersion: version },
      { key: this.#runKey(record), value: json(record), expireInMs: this.#o.runRetentionMs },
    ]);
    if (!written.ok) {
      // Another server changed the state meanwhile (this one's lease ran out): its state stands.
      const lost: RunRecord = {
        ...record,
        state: "failed",
        error: "the schedule's state changed during the run (its lease ran out): not recorded",
      };
      await this.#o.storage.put(this.#runKey(lost), json(lost), {
        expireInMs: this.#o.runRetentionMs,
      });
      return lost;
    }
    return record;
  }

  /** A run over an explicit window (a backfill); it does not move the schedule's coverage. */
  async runNow(schedule: Schedule, from: number, to: number): Promise<RunRecord | "leased"> {
    const run = await this.#leased(schedule, async () => {
      const { record } = await this.#evaluate(schedule, [{ from, to }], "backfill");
      await this.#o.storage.put(this.#runKey(record), json(record), {
        expireInMs: this.#o.runRetentionMs,
      });
      return record;
    });
    return run ?? "leased";
  }

  async #leased<T>(schedule: Schedule, work: () => Promise<T>): Promise<T | undefined> {
    const key = [...ROOT, "leases", schedule.id];
    const now = this.#o.clock();
    const held = await this.#o.storage.get(key);
    if (held) {
      const lease = parse<{ server: string; until: number }>(held.value);
      if (lease.until > now && lease.server !== this.#o.server) return undefined;
    }
    const taken = await this.#o.storage.put(
      key,
      json({ server: this.#o.server, until: now + this.#o.leaseMs }),
      { expectedVersion: held?.version ?? null },
    );
    if (!taken.ok) return undefined;
    try {
      return await work();
    } finally {
      await this.#o.storage.delete(key, { expectedVersion: taken.version });
    }
  }

  #runKey(record: RunRecord): StorageKey {
    const start = String(record.startedAt).padStart(15, "0");
    return [...ROOT, "runs", record.schedule, `${start}-${record.id}`];
  }

  #failed(schedule: Schedule, window: Window, kind: RunRecord["kind"], error: string): RunRecord {
    const now = this.#o.clock();
    return {
      id: crypto.randomUUID(),
      schedule: schedule.id,
      kind,
      from: window.from,
      to: window.to,
      server: this.#o.server,
      startedAt: now,
      finishedAt: now,
      state: "failed",
      matches: 0,
      alerts: 0,
      duplicates: 0,
      suppressed: 0,
      error,
    };
  }

  /**
   * Runs the query of each window (the first is the run's own; the others, cloud hours read
   * again) and alerts its new matches; the run's record (not yet stored) and the windows whose
   * query succeeded.
   */
  async #evaluate(
    schedule: Schedule,
    windows: readonly Window[],
    kind: RunRecord["kind"],
  ): Promise<{ record: RunRecord; succeeded: Window[] }> {
    const startedAt = this.#o.clock();
    const id = crypto.randomUUID();
    const succeeded: Window[] = [];
    const errors: string[] = [];
    let queryId: string | undefined;
    let matches = 0;
    let alerts = 0;
    let duplicates = 0;
    let suppressed = 0;
    for (const [i, window] of windows.entries()) {
      try {
        const outcome = await this.#o.runQuery(schedule, window);
        if (i === 0) queryId = outcome.queryId;
        for (const r of outcome.records) {
          const result = await this.#alert(schedule, outcome, r, { ...window, run: id });
          if (result === "new") alerts++;
          else if (result === "suppressed") suppressed++;
          else duplicates++;
        }
        matches += outcome.records.length;
        succeeded.push(window);
      } catch (e) {
        const what = i === 0 ? "" : `cloud hours from ${new Date(window.from).toISOString()}: `;
        errors.push(what + (e as Error).message);
      }
    }
    const [main, ...late] = windows;
    const record: RunRecord = {
      id,
      schedule: schedule.id,
      kind,
      from: main!.from,
      to: main!.to,
      server: this.#o.server,
      startedAt,
      finishedAt: this.#o.clock(),
      state: errors.length === 0 ? "succeeded" : "failed",
      ...(queryId !== undefined ? { queryId } : {}),
      matches,
      alerts,
      duplicates,
      suppressed,
      ...(late.length > 0 ? { late: late.map((w) => ({ from: w.from, to: w.to })) } : {}),
      ...(errors.length > 0 ? { error: errors.join("; ") } : {}),
    };
    return { record, succeeded };
  }

  async #alert(
    schedule: Schedule,
    outcome: QueryOutcome,
    record: Readonly<Record<string, unknown>>,
    window: { from: number; to: number; run: string },
  ): Promise<"new" | "duplicate" | "suppressed"> {
    const now = this.#o.clock();
    const key = `${schedule.id}|${outcome.rule.id}|${await recordIdentity(record)}`;
    const seenKey = [...ROOT, "seen", schedule.id, await sha256(key)];
    let state: Alert["state"] = "pending";
    const entries = [];
    if (schedule.suppress) {
      const values = schedule.suppress.fields.map((f) => canonicalJson(pathValue(record, f)));
      const supKey = [...ROOT, "suppress", schedule.id, await sha256(values.join("\u0000"))];
      const held = await this.#o.storage.get(supKey);
      if (held && parse<{ until: number }>(held.value).until > now) state = "suppressed";
      else {
        entries.push({
          key: supKey,
          value: json({ until: now + schedule.suppress.forMinutes * MINUTE }),
          expectedVersion: held?.version ?? null,
          expireInMs: schedule.suppress.forMinutes * MINUTE,
        });
      }
    }
    const alertId = crypto.randomUUID();
    const alert: Alert = {
      id: alertId,
      key,
      schedule: schedule.id,
      rule: outcome.rule.id,
      created: now,
      payload: {
        key,
        schedule: { id: schedule.id, name: schedule.name },
        rule: outcome.rule,
        time: new Date(now).toISOString(),
        window: {
          from: new Date(window.from).toISOString(),
          to: new Date(window.to).toISOString(),
        },
        run: window.run,
        matched: outcome.matched ? [...outcome.matched(record)] : [],
        record,
      },
      state,
      attempts: 0,
      nextAt: now,
    };
    const written = await this.#o.storage.commit([
      {
        key: seenKey,
        value: json({ key, alert: alertId, at: now }),
        expectedVersion: null,
        expireInMs: schedule.dedupDays * DAY,
      },
      { key: alertKey(alertId), value: encodeAlert(alert) },
      ...entries,
    ]);
    if (!written.ok) {
      // Seen before (or a suppression raced): retry once when it was the suppression key.
      if (written.conflict.join("/") === seenKey.join("/")) return "duplicate";
      return await this.#alert(schedule, outcome, record, window);
    }
    return state === "suppressed" ? "suppressed" : "new";
  }
}

/**
 * The windows a scheduled run reads: `main` first, then the cloud hours before it that changed
 * since a run last read them whole (their stamp differs from the one `evaluated` keeps) or that a
 * read would fetch (not final yet), contiguous hours as one window. A window that reaches `main`
 * extends it instead. No hour is read from before `since`.
 */
export function lateWindows(
  hours: readonly CloudHour[],
  evaluated: Readonly<Record<string, string | null>>,
  main: Window,
  since: number,
): Window[] {
  const late = hours
    .filter((h) => h.hour < main.from && h.end > since)
    .filter((h) => h.due || evaluated[h.key] !== h.stamp)
    .map((h) => ({ from: Math.max(h.hour, since), to: Math.min(h.end, main.from) }))
    .sort((a, b) => a.from - b.from);
  const merged: { from: number; to: number }[] = [];
  for (const w of late) {
    const last = merged.at(-1);
    if (last && w.from <= last.to) last.to = Math.max(last.to, w.to);
    else merged.push({ ...w });
  }
  let from = main.from;
  while (merged.length > 0 && merged.at(-1)!.to >= from) from = Math.min(from, merged.pop()!.from);
  return [{ from, to: main.to }, ...merged];
}

function pathValue(record: Readonly<Record<string, unknown>>, path: string): unknown {
  let v: unknown = record;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object") return null;
    v = (v as Record<string, unknown>)[part];
  }
  return v ?? null;
}
