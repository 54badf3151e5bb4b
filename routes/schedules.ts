/**
 * Scheduled detections over HTTP (docs/detections.md), on actors/scheduler.ts and
 * actors/alert_outbox.ts:
 *
 * - `POST /schedules` creates, `GET /schedules` lists (yours; an admin's: all),
 *   `GET`/`PUT`/`DELETE /schedules/<id>` read, replace and delete;
 * - `POST /schedules/<id>/run` `{"from", "to"}` runs it now over that window (a backfill);
 * - `GET /schedules/<id>/runs`, `GET /schedules/<id>/alerts` (`?state=dead`),
 *   `POST /schedules/<id>/alerts/<alert>/redeliver`.
 *
 * A schedule belongs to its owner (and admins); it runs as `runAs` (the owner unless an admin
 * names another user), whose rights apply to its query. The webhook's secret is write-only:
 * every answer shows `"secret": "(hidden)"`, and a `PUT` without a secret keeps the old one.
 * Runs go through the supervisor like any query (`GET /queries` lists them as
 * `schedule:<name>`), with the window as the script's `from`/`to` arguments.
 */

import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { z } from "zod";
import type { Row, Storage, User } from "../engine/mod.ts";
import { encodeRowObject } from "../engine/mod.ts";
import { type Alert, AlertOutbox } from "../actors/alert_outbox.ts";
import {
  nextDue,
  parseCron,
  type RunQuery,
  type Schedule,
  Scheduler,
  SCHEDULES,
} from "../actors/scheduler.ts";
import { cloudHoursOf } from "../actors/scheduler_cloud.ts";
import { cloudLag, convertSigma, matchRecords } from "../actors/sigma_rules.ts";
import type { DatastoreAdmin } from "../actors/datastore_admin.ts";
import type { UserStore } from "../home/user_store.ts";
import type { Settings } from "../home/settings.ts";
import { type AllowEntry, refusedUrl } from "../home/private_targets.ts";
import { ApiError, badRequest } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { queryContext, type QueryDeps, submitSource } from "./query_request.ts";
import { negotiateFormat } from "./formats.ts";
import { resultItems } from "./queries.ts";
import { formatDiagnostic } from "../engine/mod.ts";

export interface DetectionDeps {
  readonly storage: Storage;
  /** This server's name in leases and runs. */
  readonly server: string;
  readonly clock?: () => number;
  /** How often due schedules and alerts are looked at; 0: never by itself (tests tick). */
  readonly tickMs?: number;
  /** Receives the loop's stop (main.ts calls it at shutdown). */
  readonly started?: (stop: () => Promise<void>) => void;
  /** Where a tick that failed (the storage unreachable) is told. */
  readonly warn?: (message: string) => void;
  /** Hands the scheduler and the outbox to a test, which ticks them itself. */
  readonly onStart?: (parts: { scheduler: Scheduler; outbox: AlertOutbox }) => void;
  /** Outbox options (settings `alerts.*`; tests). */
  readonly outbox?: {
    readonly maxAttempts?: number;
    readonly baseDelayMs?: number;
    readonly maxDelayMs?: number;
    readonly timeoutMs?: number;
    readonly keepDeliveredMs?: number;
  };
  /** How long a server's lease on a run lasts (`detections.lease`). */
  readonly leaseMs?: number;
  /** How long run records are kept (`detections.runRetention`). */
  readonly runRetentionMs?: number;
  /** How far back changed cloud hours are read again (`detections.lateHorizon`; 0: never). */
  readonly lateHorizonMs?: number;
  /** The `dedupDays` of schedules that set none (`detections.dedupDays`). */
  readonly dedupDays?: number;
  /** Webhook targets of the server's own network allowed (`alerts.allowPrivateTargets`). */
  readonly allowPrivateTargets?: readonly AllowEntry[];
}

/** The options of /schedules that are settings (main.ts; the test server). */
export function detectionSettings(settings: Settings) {
  return {
    tickMs: settings["detections.tick"],
    leaseMs: settings["detections.lease"],
    runRetentionMs: settings["detections.runRetention"],
    lateHorizonMs: settings["detections.lateHorizon"],
    dedupDays: settings["detections.dedupDays"],
    allowPrivateTargets: settings["alerts.allowPrivateTargets"] ?? [],
    outbox: {
      maxAttempts: settings["alerts.maxAttempts"],
      baseDelayMs: settings["alerts.retryDelay"],
      maxDelayMs: settings["alerts.maxRetryDelay"],
      timeoutMs: settings["alerts.timeout"],
      keepDeliveredMs: settings["alerts.keepDelivered"],
    },
  } satisfies Partial<DetectionDeps>;
}

/** The largest body of POST/PUT /schedules and /run (a Sigma rule of up to 1 MiB). */
export const MAX_SCHEDULE_BYTES = 1024 * 1024 + 64 * 1024;

const NAME = z.string().min(1).max(200);
const ScheduleBody = z.object({
  name: NAME,
  script: z.string().min(1).max(128 * 1024).optional(),
  sigma: z.string().min(1).max(1024 * 1024).optional(),
  target: z.string().regex(/^[a-z0-9_-]{1,64}$/).optional(),
  store: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
  everyMinutes: z.number().int().min(1).max(7 * 1440).optional(),
  cron: z.string().max(200).optional(),
  lookbackMinutes: z.number().int().min(1).max(90 * 1440),
  runAs: NAME.optional(),
  enabled: z.boolean().default(true),
  dedupDays: z.number().int().min(1).max(400).optional(),
  webhook: z.object({
    url: z.string().url().refine((u) => /^https?:\/\//.test(u), "http or https"),
    secret: z.string().min(16).max(512).optional(),
  }).strict().optional(),
  suppress: z.object({
    fields: z.array(z.string().min(1)).min(1).max(20),
    forMinutes: z.number().int().min(1).max(30 * 1440),
  }).strict().optional(),
}).strict();

const RunBody = z.object({ from: z.string(), to: z.string() }).strict();

/**
 * The warnings that say records of the window were not read (an hour given up, a blob lost or
 * unreadable, no right to read): such a run does not cover its window. Warnings about the data
 * read (a field no record had) do not count.
 */
export function dataLoss(
  warnings: readonly { readonly level: string; readonly message: string }[],
): string[] {
  return warnings.filter((w) =>
    w.level === "ERROR" ||
    (w.level === "WARN" &&
      /given up|lost|vanished|cannot be read|could not be read|no right to read/i.test(w.message))
  ).map((w) => w.message);
}

/** A schedule as answers show it: the secret hidden. */
function shown(s: Schedule) {
  return s.webhook ? { ...s, webhook: { url: s.webhook.url, secret: "(hidden)" } } : s;
}

function jsonRecord(row: Row): Record<string, unknown> {
  return JSON.parse(encodeRowObject(row)) as Record<string, unknown>;
}

/** The query of a run: the script or the converted rule, submitted as the schedule's user. */
function runQuery(queryDeps: QueryDeps, users: UserStore): RunQuery {
  return async (schedule, window) => {
    const user = await users.get(schedule.runAs);
    if (!user) throw new Error(`user '${schedule.runAs}' does not exist`);
    let text = schedule.script;
    let rule: { id: string; title?: string; level?: string } = { id: schedule.id };
    let matched: ((r: Readonly<Record<string, unknown>>) => string[]) | undefined;
    if (schedule.sigma !== undefined) {
      const [c] = await convertSigma(queryDeps.tree, {
        text: schedule.sigma,
        target: schedule.target,
        store: schedule.store,
      });
      if (!c || !c.ok) throw new Error(`the Sigma rule is not converted: ${c?.message}`);
      text = c.script!;
      rule = {
        id: c.id ?? schedule.id,
        ...(c.title ? { title: c.title } : {}),
        ...(c.level ? { level: c.level } : {}),
      };
      matched = (r) => matchRecords(c, [r])[0]?.fields ?? [];
    }
    const choice = negotiateFormat(new URLSearchParams(), "application/json");
    if (!choice.ok) throw new Error(choice.message);
    const args = {
      from: new Date(window.from).toISOString(),
      to: new Date(window.to).toISOString(),
    };
    const prepared = await submitSource(queryDeps, {
      source: { text: text! },
      context: queryContext(queryDeps, user, `/users/${user.name}`, args),
      choice: { format: choice.format, explicit: false },
      alwaysFix: false,
      listedAs: `schedule:${schedule.name}`,
    });
    const handle = prepared.handle;
    await handle.finishedUnless(new AbortController().signal);
    const { error, warnings } = handle.outcome();
    if (error) throw new Error(`query ${prepared.queryId} failed: ${formatDiagnostic(error)}`);
    const lost = dataLoss(warnings);
    if (lost.length > 0) {
      // Records it should have read were not: the window is not covered, the next run retries it.
      throw new Error(`query ${prepared.queryId} could not read all of its window: ${lost[0]}`);
    }
    const items = resultItems(handle);
    const records: Record<string, unknown>[] = [];
    if (items.count > 0) {
      for await (const batch of items.read(0, items.count - 1)) {
        for (const item of batch) {
          records.push(typeof item === "string" ? JSON.parse(item) : jsonRecord(item));
        }
      }
    }
    return { queryId: prepared.queryId, rule, records, ...(matched ? { matched } : {}) };
  };
}

const SERVER: User = { name: "(server)", groups: [], admin: true };

/** The `cloudapi://` URIs a schedule reads: its converted rule's sources, or those its script names. */
async function cloudUris(
  queryDeps: QueryDeps,
  input: {
    script?: string | undefined;
    sigma?: string | undefined;
    target?: string | undefined;
    store?: string | undefined;
  },
): Promise<string[]> {
  if (input.sigma !== undefined) {
    const [c] = await convertSigma(queryDeps.tree, {
      text: input.sigma,
      target: input.target,
      store: input.store,
    });
    return c?.ok ? (c.sources ?? []).filter((s) => s.startsWith("cloudapi://")) : [];
  }
  return [...(input.script ?? "").matchAll(/cloudapi:\/\/[^'"\s]+/g)].map((m) => m[0]);
}

export function scheduleRoutes(
  queryDeps: QueryDeps,
  users: UserStore,
  deps: DetectionDeps,
  stores?: DatastoreAdmin,
): Hono<AppEnv> {
  const clock = deps.clock ?? Date.now;
  const { storage } = deps;
  const scheduler = new Scheduler({
    storage,
    clock,
    server: deps.server,
    runQuery: runQuery(queryDeps, users),
    // Cloud hours whose stored records changed since a run read them are read again.
    cloudHours: cloudHoursOf({
      datastores: queryDeps.datastores,
      user: (name) => users.get(name),
      uris: (schedule) => cloudUris(queryDeps, schedule),
    }),
    ...(deps.lateHorizonMs !== undefined ? { lateHorizonMs: deps.lateHorizonMs } : {}),
    ...(deps.leaseMs !== undefined ? { leaseMs: deps.leaseMs } : {}),
    ...(deps.runRetentionMs !== undefined ? { runRetentionMs: deps.runRetentionMs } : {}),
  });
  const allowPrivateTargets = deps.allowPrivateTargets ?? [];
  const read = async (id: string): Promise<Schedule | undefined> => {
    const stored = await storage.get([...SCHEDULES, id]);
    return stored ? JSON.parse(new TextDecoder().decode(stored.value)) as Schedule : undefined;
  };
  const outbox = new AlertOutbox({
    storage,
    clock,
    webhookOf: async (id) => (await read(id))?.webhook,
    allowPrivateTargets,
    ...deps.outbox,
  });
  deps.onStart?.({ scheduler, outbox });
  if (deps.tickMs && deps.tickMs > 0) {
    let stopped = false;
    let busy: Promise<unknown> | undefined;
    const timer = setInterval(() => {
      // A tick still running (a long query) is not stacked upon.
      if (stopped || busy) return;
      busy = scheduler.tick().then(() => outbox.deliverDue()).catch((e) =>
        deps.warn?.(`detections: a tick failed: ${(e as Error).message}`)
      ).finally(() => busy = undefined);
    }, deps.tickMs);
    deps.started?.(async () => {
      stopped = true;
      clearInterval(timer);
      await busy;
    });
  }
  const mine = async (user: User, id: string): Promise<Schedule> => {
    const s = await read(id);
    if (!s || (s.owner !== user.name && !user.admin)) {
      throw new ApiError(404, "NOT_FOUND", `no schedule '${id}'`);
    }
    return s;
  };
  const body = async (c: { req: { json(): Promise<unknown> } }) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      throw badRequest("BAD_PARAMETER", "the body is not JSON");
    }
    const parsed = ScheduleBody.safeParse(raw);
    if (!parsed.success) {
      throw badRequest(
        "BAD_PARAMETER",
        parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "),
      );
    }
    return parsed.data;
  };
  const build = async (
    user: User,
    input: z.infer<typeof ScheduleBody>,
    id: string,
    old?: Schedule,
  ): Promise<Schedule> => {
    if ((input.script === undefined) === (input.sigma === undefined)) {
      throw badRequest("BAD_PARAMETER", "a schedule has either 'script' or 'sigma'");
    }
    if ((input.everyMinutes === undefined) === (input.cron === undefined)) {
      throw badRequest("BAD_PARAMETER", "a schedule has either 'everyMinutes' or 'cron'");
    }
    if (input.cron !== undefined) {
      const cron = parseCron(input.cron);
      if (typeof cron === "string") throw badRequest("BAD_PARAMETER", cron);
    }
    const runAs = input.runAs ?? old?.runAs ?? user.name;
    if (runAs !== user.name && !user.admin) {
      throw new ApiError(403, "FORBIDDEN", "only an admin may run a schedule as another user");
    }
    if (!(await users.get(runAs))) throw badRequest("BAD_PARAMETER", `no user '${runAs}'`);
    if (input.sigma !== undefined) {
      const rules = await convertSigma(queryDeps.tree, {
        text: input.sigma,
        target: input.target,
        store: input.store,
      });
      if (rules.length !== 1) throw badRequest("BAD_PARAMETER", "'sigma' holds one rule");
      const c = rules[0]!;
      if (!c.ok) {
        throw badRequest("BAD_RULE", `the Sigma rule is not converted: ${c.message}`, {
          reason: c.reason,
        });
      }
    }
    // A look-back shorter than a cloud log's lag would miss the records that arrive late.
    for (const uri of await cloudUris(queryDeps, input)) {
      const store = /^cloudapi:\/\/([^/]+)\//.exec(uri)?.[1];
      const definition = store && stores ? await stores.get(SERVER, store) : null;
      const lag = definition ? cloudLag(definition, uri) : undefined;
      if (lag && input.lookbackMinutes * 60_000 < lag.lagMs) {
        throw badRequest(
          "LOOKBACK_TOO_SHORT",
          `lookbackMinutes ${input.lookbackMinutes} is shorter than the lag of log '${lag.log}' of datastore '${store}' (${
            lag.lagMs / 60_000
          } minutes): records arriving later than the look-back would never be evaluated`,
        );
      }
    }
    let webhook: Schedule["webhook"];
    if (input.webhook) {
      const secret = input.webhook.secret ?? old?.webhook?.secret;
      if (secret === undefined) throw badRequest("BAD_PARAMETER", "'webhook.secret' is missing");
      // Not the server's own network (SSRF), unless an admin allows it; checked again, after
      // DNS, at each delivery (actors/alert_outbox.ts).
      const refused = refusedUrl(input.webhook.url, allowPrivateTargets);
      if (refused !== undefined) {
        throw badRequest("WEBHOOK_REFUSED", `'webhook.url': ${refused}`);
      }
      webhook = { url: input.webhook.url, secret };
    }
    const { webhook: _w, runAs: _r, ...rest } = input;
    return {
      ...rest,
      dedupDays: input.dedupDays ?? deps.dedupDays ?? 30,
      id,
      owner: old?.owner ?? user.name,
      runAs,
      created: old?.created ?? clock(),
      ...(webhook ? { webhook } : {}),
    } as Schedule;
  };
  const withState = async (s: Schedule) => {
    const state = await scheduler.state(s.id);
    const next = s.enabled ? nextDue(s, state.lastRunAt, clock()) : null;
    return {
      ...shown(s),
      state: {
        ...state,
        nextRun: next === null || !Number.isFinite(next) ? null : new Date(next).toISOString(),
      },
    };
  };
  const app = new Hono<AppEnv>();
  const limit = bodyLimit({
    maxSize: MAX_SCHEDULE_BYTES,
    onError: () => {
      throw new ApiError(
        413,
        "PAYLOAD_TOO_LARGE",
        `a schedule is at most ${MAX_SCHEDULE_BYTES} bytes`,
      );
    },
  });
  app.post("/schedules", limit, async (c) => {
    const user = c.get("user");
    const schedule = await build(user, await body(c), crypto.randomUUID());
    await storage.put(
      [...SCHEDULES, schedule.id],
      new TextEncoder().encode(JSON.stringify(schedule)),
      {
        expectedVersion: null,
      },
    );
    return sendJson(c, await withState(schedule), 201);
  });
  app.get("/schedules", async (c) => {
    const user = c.get("user");
    const all = (await scheduler.schedules()).filter((s) => user.admin || s.owner === user.name);
    return sendJson(c, { schedules: await Promise.all(all.map(withState)) });
  });
  app.get("/schedules/:id", async (c) => {
    return sendJson(c, await withState(await mine(c.get("user"), c.req.param("id"))));
  });
  app.put("/schedules/:id", limit, async (c) => {
    const user = c.get("user");
    const old = await mine(user, c.req.param("id"));
    const schedule = await build(user, await body(c), old.id, old);
    await storage.put([...SCHEDULES, old.id], new TextEncoder().encode(JSON.stringify(schedule)));
    return sendJson(c, await withState(schedule));
  });
  app.delete("/schedules/:id", async (c) => {
    const s = await mine(c.get("user"), c.req.param("id"));
    await storage.delete([...SCHEDULES, s.id]);
    return c.body(null, 204);
  });
  app.post("/schedules/:id/run", limit, async (c) => {
    const s = await mine(c.get("user"), c.req.param("id"));
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      throw badRequest("BAD_PARAMETER", "the body is not JSON");
    }
    const parsed = RunBody.safeParse(raw);
    const from = parsed.success ? Date.parse(parsed.data.from) : NaN;
    const to = parsed.success ? Date.parse(parsed.data.to) : NaN;
    if (Number.isNaN(from) || Number.isNaN(to) || from >= to) {
      throw badRequest("BAD_PARAMETER", 'run needs {"from", "to"}: two ISO times, from < to');
    }
    const run = await scheduler.runNow(s, from, to);
    if (run === "leased") {
      throw new ApiError(409, "SCHEDULE_BUSY", `schedule '${s.id}' is running on a server now`, {
        headers: { "Retry-After": "5" },
      });
    }
    // Its alerts go out now rather than at the next tick.
    await outbox.deliverDue();
    return sendJson(c, run);
  });
  app.get("/schedules/:id/runs", async (c) => {
    const s = await mine(c.get("user"), c.req.param("id"));
    return sendJson(c, { runs: await scheduler.runs(s.id) });
  });
  app.get("/schedules/:id/alerts", async (c) => {
    const s = await mine(c.get("user"), c.req.param("id"));
    const state = c.req.query("state") as Alert["state"] | undefined;
    if (state !== undefined && !["pending", "delivered", "dead", "suppressed"].includes(state)) {
      throw badRequest("BAD_PARAMETER", `no alert state '${state}'`);
    }
    const alerts = await outbox.list({ schedule: s.id, ...(state ? { state } : {}) });
    return sendJson(c, { alerts });
  });
  app.post("/schedules/:id/alerts/:alert/redeliver", async (c) => {
    const s = await mine(c.get("user"), c.req.param("id"));
    const alert = await outbox.get(c.req.param("alert"));
    if (!alert || alert.schedule !== s.id || !(await outbox.redeliver(alert.id))) {
      throw new ApiError(404, "NOT_FOUND", `no alert '${c.req.param("alert")}'`);
    }
    await outbox.deliverDue();
    return sendJson(c, await outbox.get(alert.id));
  });
  return app;
}
