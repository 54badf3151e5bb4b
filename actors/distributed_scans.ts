/**
 * One query's scan spread over every server on one PostgreSQL (`storage = pg:`,
 * `cluster.distributeBytes` above 0). Two sides, both in every server:
 *
 * - **The coordinator** (the server that took the query). The engine splits a scan's files into
 *   shares as it does for local workers (engine/exec/parallel/parallel_aggregate.ts); for an
 *   input larger than `cluster.distributeBytes` it asks `ScanWorkers.distribute`, which answers
 *   workers whose `start` puts each share in the shares table (home/storage/pg_shares.ts) instead
 *   of a local worker. When a share's answer is signalled (`done:<run>`), its messages are handed
 *   to the engine as a local worker's would be, and the engine merges the shares in their order
 *   with its own merge code. An answer written as a segment (below) is read a piece at a time,
 *   its row batches handed on at most ROW_CREDIT ahead of the engine's credits, as a worker's
 *   are, and deleted once read; when the run ended, whatever is left under it in the storage (a
 *   holder killed mid-write) is deleted too. Stopping a share (a cancel, a limit reached, the
 *   merge done) marks it cancelled and signals its holder.
 * - **The claimer**: while it has fewer shares running than `query.workers`, the server claims
 *   the oldest open share (a signal `new` wakes it, and so does the moment the first lease of a
 *   running share lapses), runs it on its own scan workers, keeps what the worker posts (rows
 *   taken as they come) and writes it into the share's row, which only the attempt that holds
 *   the share can. An answer larger than `cluster.shareAnswerBytes` (SHARE_RESULT_BYTES by
 *   default) is written as it comes as a segment in the storage, in pieces of about that size
 *   (the worker's row credits held back while a piece is written), and the row names it; an
 *   attempt whose answer is not taken (superseded, cancelled) deletes its pieces. Its leases are
 *   renewed every third of `cluster.lease`; a share no longer held (cancelled, or taken by
 *   another server after a lapse) has its worker stopped.
 *
 * A server that dies holding a share stops renewing it; once the lease lapsed another server
 * (the coordinator among them) claims it again, at most MAX_ATTEMPTS times in all.
 *
 *   const scans = new DistributedScans({ storage, pool, distributeBytes, leaseMs, log });
 *   await scans.start();
 *   compile(source, { ...context, scanWorkers: scans.workers() });
 *   await scans.stop();
 */

import {
  ROW_CREDIT,
  type ScanWorkers,
  type ShareHandle,
  type ShareMessage,
  type ShareTask,
} from "../engine/mod.ts";
import type { ScanWorkerPool } from "./scan_workers.ts";
import type { PgStorage } from "../home/storage/pg_storage.ts";
import type { Logger } from "../home/log.ts";
import {
  type Claim,
  clone,
  frames,
  MAX_ATTEMPTS,
  PgShares,
  type SegmentRef,
  SHARE_RESULT_BYTES,
  type SharesSignal,
  unframe,
} from "../home/storage/pg_shares.ts";

export interface DistributedScanOptions {
  readonly storage: PgStorage;
  /** This server's scan workers: they run the shares it claims. */
  readonly pool: ScanWorkerPool;
  /** `cluster.distributeBytes`: inputs larger than this are spread. */
  readonly distributeBytes: number;
  /** `cluster.shareAnswerBytes`: SHARE_RESULT_BYTES by default. */
  readonly answerBytes?: number;
  /** `cluster.minShareBytes`: MIN_SHARE_BYTES by default (tests lower it to spread tiny inputs). */
  readonly minShareBytes?: number;
  /** `cluster.lease`: a share's holder unheard of this long is seen dead. */
  readonly leaseMs: number;
  readonly log: Logger;
  /** This server's name in the table; a fresh one by default. */
  readonly server?: string;
}

/** Bytes of input per share of a distributed scan (about). */
export const SHARE_BYTES = 32 << 20;
/** Shares of a distributed scan: at least (so that two servers both get some), at most. */
const MIN_SHARES = 4;
const MAX_SHARES = 256;
/** A distributed share may be as small as this (the input is cut in at least MIN_SHARES). */
export const MIN_SHARE_BYTES = 256 << 10;

type Listen = (message: ShareMessage) => void;

/** A share of a run this server coordinates. */
interface CoordShare {
  readonly k: number;
  task: ShareTask;
  readonly listen: Listen;
  /**
   * waiting: in the table; live: running on this server's workers (not queued); reading: its
   * answer's segment read from the storage; ended.
   */
  state: "waiting" | "live" | "reading" | "ended";
  /** Input bytes told to the engine before the answer (from its holder's renewals). */
  told: number;
  local?: ShareHandle;
  /** Reading: row batches handed to the engine and not yet credited; the reader waiting. */
  ahead: number;
  wake: (() => void) | undefined;
}

/** A share this server claimed and runs. */
interface Held {
  readonly claim: Claim;
  /** Input bytes its worker consumed so far (told with each renewal). */
  consumed: number;
  handle: ShareHandle | undefined;
  stopped: boolean;
  /** Its answer's segment, once the answer passed `cluster.shareAnswerBytes`. */
  segment?: SegmentWriter;
}

/**
 * The pieces of one attempt's large answer, written one after the other under a fresh id
 * (`s<share>a<attempt>-<random>`: fresh even when an attempt number is given again).
 */
class SegmentWriter {
  readonly id: string;
  /** Pieces asked for; those written are `pieces - writing`. */
  pieces = 0;
  writing = 0;
  /** The first write that failed: the answer cannot be given. */
  failure: unknown;
  #chain: Promise<void> = Promise.resolve();

  constructor(readonly shares: PgShares, claim: Claim, readonly log: Logger) {
    this.run = claim.run;
    this.id = `s${claim.share}a${claim.attempt}-${crypto.randomUUID().slice(0, 8)}`;
  }

  readonly run: string;

  /** Writes `bytes` as the next piece, after those asked for before; `then` when it is done. */
  write(bytes: Uint8Array, then: () => void): void {
    const piece = this.pieces++;
    this.writing++;
    this.#chain = this.#chain.then(async () => {
      if (this.failure === undefined) {
        await this.shares.writePiece(this.run, this.id, piece, bytes).catch((e) =>
          this.failure ??= e
        );
      }
      this.writing--;
      then();
    });
  }

  /** Resolves once every piece asked for is written (or failed: `failure`). */
  settled(): Promise<void> {
    return this.#chain;
  }

  /** Deletes the pieces, once the writes asked for are done (nothing is written after). */
  drop(): Promise<void> {
    this.#chain = this.#chain.then(() =>
      this.shares.dropSegments(this.run, this.id).then(
        () => {},
        (e) =>
          this.log.warn(
            `distributed scan ${this.run}: could not delete segment ${this.id} (the storage drops it after its retention): ${
              message(e)
            }`,
          ),
      )
    );
    return this.#chain;
  }
}

/** What the client is told of a share that failed or was cancelled in the shares table. */
function shareLost(share: number, state: "failed" | "cancelled"): string {
  return state === "failed"
    ? `share ${share} of the query's scan was lost ${MAX_ATTEMPTS} times (the servers that held it stopped or failed; the coordinating server's log names the cause), and the query fails rather than run it again`
    : `share ${share} of the query's scan was cancelled by the server that held it`;
}

const isLast = (m: ShareMessage) => m.kind === "groups" || m.kind === "done" || m.kind === "failed";

/** The task without what is the coordinator's own (its column cache's folder). */
function portable(task: ShareTask): ShareTask {
  const copy: { -readonly [K in keyof ShareTask]?: ShareTask[K] } = { ...task };
  delete copy.cache;
  return copy as ShareTask;
}

/** The part as JSON, for people reading the table (bigints as text). */
function partJson(task: ShareTask): string {
  return JSON.stringify(task.part, (_k, v) => typeof v === "bigint" ? v.toString() : v);
}

export class DistributedScans {
  readonly shares: PgShares;
  readonly server: string;
  readonly #pool: ScanWorkerPool;
  readonly #options: DistributedScanOptions;
  /** The runs this server coordinates, by id. */
  readonly runs = new Map<string, CoordinatedRun>();
  /** The shares this server runs, by `run:share`. */
  readonly #held = new Map<string, Held>();
  #unlisten: (() => Promise<void>) | undefined;
  #renewTimer: ReturnType<typeof setInterval> | undefined;
  #lapseTimer: ReturnType<typeof setTimeout> | undefined;
  #claiming = false;
  #again = false;
  #stopped = false;
  /**
   * Since when this server's renewals have all reached the database (undefined: the last one
   * failed). A run is judged abandoned only after a lease of contact: after an outage its
   * coordinator, which could not say it waits either, has a third of a lease to say it again.
   */
  #contactSince: number | undefined;

  constructor(options: DistributedScanOptions) {
    this.#options = options;
    this.#pool = options.pool;
    this.server = options.server ?? `server-${crypto.randomUUID().slice(0, 8)}`;
    this.shares = new PgShares(options.storage, this.server, options.leaseMs);
  }

  get log(): Logger {
    return this.#options.log;
  }

  get leaseMs(): number {
    return this.#options.leaseMs;
  }

  get pool(): ScanWorkerPool {
    return this.#pool;
  }

  /** Makes the table, listens for signals and claims what is open. */
  async start(): Promise<void> {
    await this.shares.make();
    await this.shares.sweep();
    this.#unlisten = await this.shares.listen((s) => this.#hear(s), () => {
      // A signal may have been missed while the connection was re-made.
      this.kick();
      for (const run of this.runs.values()) void run.check();
    });
    this.#renewTimer = setInterval(() => void this.#renew(), this.leaseMs / 3);
    // The name the shares table gives this server (`coordinator`, `holder`): which process is
    // which, for people (and tests) reading the table.
    this.log.info(`distributed scans: this server is ${this.server} in the shares table`);
    this.kick();
  }

  /** Stops claiming, stops the workers of the shares it holds and gives them back. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#renewTimer);
    clearTimeout(this.#lapseTimer);
    const closing = [...this.runs.values()].map((run) => run.close());
    for (const held of this.#held.values()) {
      held.stopped = true;
      held.handle?.stop();
    }
    // Pieces of answers not given (and of runs ended here) are deleted before the shares are
    // given back.
    await Promise.all([...closing, ...[...this.#held.values()].map((h) => h.segment?.drop())]);
    this.#held.clear();
    await this.#unlisten?.();
    await this.shares.release().catch((e) =>
      this.log.warn(`distributed scans: could not give back this server's shares: ${message(e)}`)
    );
  }

  /** This server's scan workers, which spread an input larger than the setting. */
  workers(): ScanWorkerPool {
    const pool = this.#pool;
    return {
      count: pool.count,
      minShareBytes: pool.minShareBytes,
      ...(pool.isolateBytes === undefined ? {} : { isolateBytes: pool.isolateBytes }),
      start: (task, listen) => pool.start(task, listen),
      close: () => pool.close(),
      distribute: (bytes) => this.#distribute(bytes),
    };
  }

  #distribute(bytes: number): ScanWorkers | undefined {
    if (this.#stopped || bytes <= this.#options.distributeBytes) return undefined;
    const run = new CoordinatedRun(crypto.randomUUID(), this);
    return {
      count: Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.ceil(bytes / SHARE_BYTES))),
      minShareBytes: Math.min(
        this.#pool.minShareBytes,
        this.#options.minShareBytes ?? MIN_SHARE_BYTES,
      ),
      start: (task, listen) => run.add(task, listen),
    };
  }

  #hear(signal: SharesSignal): void {
    if (signal.kind === "new") return this.kick();
    if (signal.kind === "done") {
      void this.runs.get(signal.run)?.check();
      return;
    }
    // A cancel: the leases tell which of the shares held here are no longer this server's.
    if ([...this.#held.values()].some((h) => h.claim.run === signal.run)) void this.#renew();
  }

  /** Claims shares while this server has workers to spare. */
  kick(): void {
    void this.#claim();
  }

  async #claim(): Promise<void> {
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = true;
    try {
      do {
        this.#again = false;
        while (!this.#stopped && this.#held.size < this.#pool.count) {
          const claim = await this.shares.claim();
          if (claim === null) break;
          this.#run(claim);
        }
        if (!this.#stopped && this.#held.size < this.#pool.count) await this.#armLapse();
      } while (this.#again && !this.#stopped);
    } catch (e) {
      this.log.warn(`distributed scans: could not claim a share: ${message(e)}`);
      this.#wakeIn(this.leaseMs);
    } finally {
      this.#claiming = false;
    }
  }

  /** Wakes the claimer when the first lease of a running share lapses. */
  async #armLapse(): Promise<void> {
    const ms = await this.shares.nextLapse();
    if (ms !== null) this.#wakeIn(ms + 50);
  }

  #wakeIn(ms: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#lapseTimer);
    this.#lapseTimer = setTimeout(() => this.kick(), ms);
  }

  /**
   * Runs a claimed share on this server's workers; its answer goes into its row, or, past
   * `cluster.shareAnswerBytes`, into a segment its row names.
   */
  #run(claim: Claim): void {
    const key = `${claim.run}:${claim.share}`;
    const held: Held = { claim, consumed: 0, handle: undefined, stopped: false };
    this.#held.set(key, held);
    let kept: Uint8Array[] = [];
    const most = this.#options.answerBytes ?? SHARE_RESULT_BYTES;
    let size = 0;
    /** Credits of row batches taken while a piece was written: given once it is. */
    let withheld = 0;
    const progress = {
      kind: "progress" as const,
      bytes: 0,
      stats: {
        bytesRead: 0,
        recordsRead: 0,
        recordsUnmatched: 0,
        cacheBytes: 0,
        cacheBlocks: 0,
        cacheBlocksSkipped: 0,
      },
    };
    const end = async (result: Uint8Array, segment: SegmentRef | null) => {
      this.#held.delete(key);
      // Its worker is free: the next share is claimed while this answer is written.
      this.kick();
      let written = false;
      try {
        written = await this.shares.answer(claim, "done", result, null, segment);
        if (!written) {
          this.log.info(
            `distributed scan ${claim.run}: the answer of share ${claim.share} (attempt ${claim.attempt}) came late and was ignored`,
          );
        }
      } catch (e) {
        this.log.warn(
          `distributed scan ${claim.run}: could not write the answer of share ${claim.share}: ${
            message(e)
          }`,
        );
      }
      // Not named by the row: nobody reads it.
      if (!written) await held.segment?.drop();
    };
    /** Not the query's fault: the share runs again, here or elsewhere (pg_shares.ts). */
    const again = (why: string) => {
      held.stopped = true;
      held.handle?.stop();
      this.#held.delete(key);
      void held.segment?.drop();
      void this.shares.again(claim, why).catch((e) =>
        this.log.warn(
          `distributed scan ${claim.run}: could not queue share ${claim.share} again: ${
            message(e)
          }`,
        )
      ).finally(() => this.#wakeIn(this.leaseMs / 3));
    };
    const written = () => {
      const segment = held.segment!;
      if (held.stopped) return;
      if (segment.failure !== undefined) {
        return again(`could not write its answer to the storage: ${message(segment.failure)}`);
      }
      if (segment.writing > 0) return;
      for (; withheld > 0; withheld--) held.handle?.credit();
    };
    /** The messages kept so far as the segment's next piece. */
    const flush = () => {
      held.segment ??= new SegmentWriter(this.shares, claim, this.log);
      held.segment.write(frames(kept), written);
      kept = [];
      size = 0;
    };
    held.handle = this.#pool.start(claim.task as ShareTask, (m) => {
      if (held.stopped) return;
      if (m.kind === "progress") {
        progress.bytes += m.bytes;
        held.consumed = progress.bytes;
        if (m.stats) {
          for (const k of Object.keys(progress.stats) as (keyof typeof progress.stats)[]) {
            progress.stats[k] += m.stats[k] ?? 0;
          }
        }
        return;
      }
      if (m.kind === "failed" && !("diagnostic" in m)) {
        // Not the query's fault (the storage away in a database restart, a worker that
        // crashed): run again, a bounded number of times.
        return again(m.message);
      }
      const bytes = clone(m);
      size += bytes.length + 4;
      kept.push(bytes);
      if (!isLast(m)) {
        if (size > most) flush();
        // Rows are taken at once, while no piece is being written.
        if (m.kind === "rows" || m.kind === "rendered") {
          if (held.segment !== undefined && held.segment.writing > 0) withheld++;
          else held.handle?.credit();
        }
        return;
      }
      if (held.segment === undefined && size <= most) {
        void end(frames([clone(progress), ...kept]), null);
        return;
      }
      // A large answer: the rest is the segment's last piece; the row keeps the progress.
      flush();
      const segment = held.segment!;
      void segment.settled().then(() => {
        if (held.stopped || segment.failure !== undefined) return;
        return end(frames([clone(progress)]), { id: segment.id, pieces: segment.pieces });
      });
    });
  }

  /**
   * Says its runs are still waited for; renews the leases held; stops the workers of shares no
   * longer held (cancelled, lost, or their coordinator gone).
   */
  async #renew(): Promise<void> {
    const holding = [...this.#held.values()];
    const claims = holding.map((h) => h.claim);
    let lost: Claim[];
    try {
      // This server's own runs are still waited for (a run unseen for a lease is abandoned).
      await this.shares.seen([...this.runs.keys()]);
      const now = performance.now();
      const judge = this.#contactSince !== undefined && now - this.#contactSince >= this.leaseMs;
      lost = await this.shares.renew(claims, holding.map((h) => h.consumed), judge);
      this.#contactSince ??= now;
    } catch (e) {
      this.#contactSince = undefined;
      this.log.warn(`distributed scans: could not renew the leases of shares: ${message(e)}`);
      return;
    }
    for (const claim of lost) {
      const key = `${claim.run}:${claim.share}`;
      const held = this.#held.get(key);
      if (held === undefined || held.claim.attempt !== claim.attempt) continue;
      held.stopped = true;
      held.handle?.stop();
      this.#held.delete(key);
      void held.segment?.drop();
      await this.shares.stopped(claim).catch(() => {});
      this.log.info(
        `distributed scan ${claim.run}: share ${claim.share} is no longer this server's: its worker stopped`,
      );
    }
    if (lost.length > 0) this.kick();
  }
}

/** One split of one query's scan, as its coordinator sees it. */
class CoordinatedRun {
  readonly shares: CoordShare[] = [];
  readonly #cancels = new Set<number>();
  #queued: Promise<boolean> | undefined;
  #checking = false;
  #checkAgain = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(readonly id: string, readonly owner: DistributedScans) {}

  /** The engine starts share `k` (in order): queued with the others of this turn. */
  add(task: ShareTask, listen: Listen): ShareHandle {
    const s: CoordShare = {
      k: this.shares.length,
      task: portable(task),
      listen,
      state: "waiting",
      told: 0,
      ahead: 0,
      wake: undefined,
    };
    this.shares.push(s);
    this.#queued ??= Promise.resolve().then(() => this.#queue());
    return {
      stop: () => this.#stop(s),
      credit: () => {
        if (s.local) return s.local.credit();
        s.ahead--;
        s.wake?.();
      },
    };
  }

  async #queue(): Promise<boolean> {
    this.owner.runs.set(this.id, this);
    // The engine gave each share the query's memory over the shares; a server runs at most
    // `query.workers` of them at once, so each may have the query's memory over that.
    const n = this.shares.length;
    const memoryLimit = Math.floor(
      this.shares[0]!.task.limits.memoryLimit * n / Math.max(1, this.owner.pool.count),
    );
    for (const s of this.shares) s.task = { ...s.task, limits: { ...s.task.limits, memoryLimit } };
    try {
      await this.owner.shares.queue(
        this.id,
        this.shares.map((s) => ({ part: partJson(s.task), task: clone(s.task) })),
      );
    } catch (e) {
      this.owner.log.warn(
        `distributed scan ${this.id}: could not queue its shares (${
          message(e)
        }); the scan runs on this server`,
      );
      for (const s of this.shares) if (s.state === "waiting") this.#runHere(s);
      return false;
    }
    this.owner.kick();
    // The progress of the shares running, and the safety net for a signal lost: looked at every
    // third of a lease, as often as the holders tell it.
    this.#timer = setInterval(() => void this.check(true), this.owner.leaseMs / 3);
    this.#forgetWhenEnded();
    return true;
  }

  /**
   * Takes the answers of the shares that ended and hands them to the engine; with `progress`,
   * also what the running ones have read since.
   */
  async check(progress = false): Promise<void> {
    if (this.#checking) {
      this.#checkAgain = true;
      return;
    }
    this.#checking = true;
    try {
      do {
        this.#checkAgain = false;
        const waiting = this.shares.filter((s) => s.state === "waiting").map((s) => s.k);
        const ended = await this.owner.shares.ended(this.id, waiting);
        for (const e of ended) {
          const s = this.shares[e.share];
          if (s === undefined || s.state !== "waiting") continue;
          s.state = e.segment === undefined ? "ended" : "reading";
          if (e.state === "failed" || e.state === "cancelled") {
            // Not the query's fault, nor a bug: the servers that held the share stopped or
            // failed. The client is told so; the cause (a worker's error, which may name this
            // server's files) goes to the log only.
            if (e.error !== null) {
              this.owner.log.warn(
                `distributed scan ${this.id}: share ${s.k} ${e.state}: ${e.error}`,
              );
            }
            s.listen({
              kind: "failed",
              diagnostic: { code: "RUNTIME_ERROR", message: shareLost(s.k, e.state) },
            });
            continue;
          }
          for (const m of unframe(e.result ?? new Uint8Array()) as ShareMessage[]) {
            // The bytes told before the answer are not told again.
            if (m.kind === "progress") {
              s.listen({ ...m, bytes: Math.max(0, m.bytes - s.told) });
            } else s.listen(m);
          }
          if (e.segment !== undefined) void this.#read(s, e.segment);
        }
        if (progress) {
          const running = this.shares.filter((s) => s.state === "waiting").map((s) => s.k);
          for (const [k, bytes] of await this.owner.shares.consumed(this.id, running)) {
            const s = this.shares[k];
            // A share claimed again starts from 0: told only past what was told.
            if (s === undefined || s.state !== "waiting" || bytes <= s.told) continue;
            s.listen({ kind: "progress", bytes: bytes - s.told });
            s.told = bytes;
          }
          progress = false;
        }
      } while (this.#checkAgain);
    } catch (e) {
      // Looked at again on the next signal or the timer.
      this.owner.log.warn(`distributed scan ${this.id}: could not read its answers: ${message(e)}`);
    } finally {
      this.#checking = false;
      this.#forgetWhenEnded();
    }
  }

  /**
   * Hands the engine the messages of a share's segment, a piece at a time, its row batches at
   * most ROW_CREDIT ahead of the engine's credits (as a worker's); then deletes the segment.
   */
  async #read(s: CoordShare, segment: SegmentRef): Promise<void> {
    const shares = this.owner.shares;
    try {
      for (let piece = 0; piece < segment.pieces && s.state === "reading"; piece++) {
        const bytes = await shares.readPiece(this.id, segment.id, piece);
        if (bytes === null) {
          throw new Error(`piece ${piece} of its answer is gone from the storage`);
        }
        for (const m of unframe(bytes) as ShareMessage[]) {
          if (m.kind === "rows" || m.kind === "rendered") {
            while (s.ahead >= ROW_CREDIT && s.state === "reading") {
              await new Promise<void>((wake) => s.wake = wake);
              s.wake = undefined;
            }
            s.ahead++;
          }
          if (s.state !== "reading") break;
          s.listen(m);
        }
      }
    } catch (e) {
      if (s.state === "reading") {
        s.state = "ended";
        s.listen({
          kind: "failed",
          code: "INTERNAL",
          message: `could not read the answer of share ${s.k} of the query's scan: ${message(e)}`,
        });
      }
    } finally {
      if (s.state === "reading") s.state = "ended";
      await shares.dropSegments(this.id, segment.id).catch((e) =>
        this.owner.log.warn(
          `distributed scan ${this.id}: could not delete the segment of share ${s.k} (the storage drops it after its retention): ${
            message(e)
          }`,
        )
      );
      this.#forgetWhenEnded();
    }
  }

  /** A share not queued: run on this server's workers, streaming. */
  #runHere(s: CoordShare): void {
    s.state = "live";
    s.local = this.owner.pool.start(s.task, (m) => {
      if (s.state !== "live") return;
      if (isLast(m)) s.state = "ended";
      s.listen(m);
      this.#forgetWhenEnded();
    });
  }

  #stop(s: CoordShare): void {
    if (s.state === "ended") return;
    if (s.state === "reading") {
      // Its reader stops at the next message and deletes the segment.
      s.state = "ended";
      s.wake?.();
      return;
    }
    if (s.state === "live") {
      s.state = "ended";
      s.local?.stop();
      this.#forgetWhenEnded();
      return;
    }
    s.state = "ended";
    const first = this.#cancels.size === 0;
    this.#cancels.add(s.k);
    // The stops of one turn (the engine stops every share at once) go in one statement.
    if (first) void this.#queued?.then((queued) => this.#cancel(queued));
  }

  async #cancel(queued: boolean): Promise<void> {
    const shares = [...this.#cancels];
    this.#cancels.clear();
    if (queued) {
      await this.owner.shares.cancel(this.id, shares).catch((e) =>
        this.owner.log.warn(
          `distributed scan ${this.id}: could not cancel its shares: ${message(e)}`,
        )
      );
    }
    this.#forgetWhenEnded();
  }

  #forgetWhenEnded(): void {
    if (this.shares.every((s) => s.state === "ended") && this.#cancels.size === 0) {
      void this.close();
    }
  }

  /** Forgets the run; once queued, deletes what is left of it in the storage. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    clearInterval(this.#timer);
    this.owner.runs.delete(this.id);
    if (this.#timer === undefined) return Promise.resolve();
    // The pieces of attempts never read (a holder killed while it wrote them).
    return this.owner.shares.dropSegments(this.id).then(() => {}, (e) =>
      this.owner.log.warn(
        `distributed scan ${this.id}: could not delete its segments (the storage drops them after their retention): ${
          message(e)
        }`,
      ));
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
