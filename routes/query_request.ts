/**
 * What POST /queries and the synchronous POST / share: reading the script (body or stored
 * path) within the size limit, checking rights on the working directory, and handing the query
 * to the actors (actors/submission.ts), which compile it at once (400 with every diagnostic, no
 * query started) and submit it to the supervisor (429 when the queue is full).
 */

import { dirname } from "node:path";
import type { Context } from "hono";
import type {
  DatastoreRegistry,
  QueryContext,
  ResourceTree,
  Row,
  ScanWorkers,
  ScriptSource,
  User,
} from "../engine/mod.ts";
import type { Settings } from "../home/settings.ts";
import type { SupervisorRef } from "../actors/supervisor.ts";
import type { SubmissionDeps } from "../actors/submission.ts";
import type { LiveHandle, QueryDirectory } from "../actors/query_directory.ts";
import type { ResultQuota } from "../actors/result_quota.ts";
import type { SharedQueries } from "../actors/shared_queries.ts";
import type { FragmentEncoderFactory } from "../actors/engine_work.ts";
import { ApiError, badRequest, diagnosticsError, forbidden, notFound } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import {
  formatSpec,
  isOptionName,
  negotiateFormat,
  type ResultFormat,
  rowTextOf,
} from "./formats.ts";
import { rowWriter } from "./result_body.ts";

/** What the query routes need from the app's dependencies. */
export interface QueryDeps {
  readonly settings: Settings;
  readonly tree: ResourceTree;
  readonly datastores: DatastoreRegistry;
  readonly supervisor: SupervisorRef;
  /** `<home>/engine_data/results` */
  readonly resultsDir: string;
  /** Each user's share of the results held (query.maxResultsPerUser, ...). */
  readonly resultQuota?: ResultQuota;
  /** The workers queries' scans run on (query.workers); absent: in the server's thread. */
  readonly scanWorkers?: ScanWorkers | undefined;
  /** Servers sharing a KV: the queries' registry across them (actors/shared_queries.ts). */
  readonly sharedQueries?: SharedQueries | undefined;
  /** Where the routes find a query by its id, wherever it is (actors/query_directory.ts). */
  readonly directory: QueryDirectory;
}

export const SCRIPT_CONTENT_TYPE = "text/vnd.engine.script";
/** Content types a script in the body may come with (SpectX's own clients send text/plain). */
const SCRIPT_CONTENT_TYPES = new Set([SCRIPT_CONTENT_TYPE, "text/plain"]);

/** A format fixed when the query was posted, with the columns its fragments were written for. */
export interface FixedFormat {
  readonly format: ResultFormat;
  columns?: readonly string[];
}

/** Parameters that are neither view arguments nor unknown (and `waitMillis` on POST /queries). */
const RESERVED = new Set(["scriptPath", "acceptContentType"]);

/** A new query id: a random (v4) UUID in lower case, as SpectX's own clients parse them. */
export function newQueryId(): string {
  return crypto.randomUUID();
}

/** Shape of the ids newQueryId makes; anything else is unknown without a lookup. */
export const QUERY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export interface PreparedQuery {
  readonly queryId: string;
  readonly handle: LiveHandle;
  readonly format: ResultFormat;
  readonly fixed?: FixedFormat | undefined;
}

/**
 * Reads, checks, compiles and submits the query a request describes. `alwaysFix` serialises
 * rows while running even without a format named (the synchronous API knows its format).
 */
export async function submitQuery(
  c: Context<AppEnv>,
  deps: QueryDeps,
  options: {
    readonly alwaysFix: boolean;
    readonly idempotencyKey?: string | undefined;
    /** Servers sharing a KV: store the result for the others (POST /queries). */
    readonly shareResult?: boolean | undefined;
    /**
     * The API reads `waitMillis` itself (POST /queries); elsewhere (the synchronous API) it is
     * a view argument like any other, or refused beside a script in the body.
     */
    readonly waitMillis?: boolean;
    /** Listed by `GET /queries` with its script path and first line (POST /queries). */
    readonly listed?: boolean;
  },
): Promise<PreparedQuery> {
  const user = c.get("user");
  const key = options.idempotencyKey;
  const held = key === undefined ? undefined : deps.directory.idempotent(user, key);
  const url = new URL(c.req.url);
  const params = url.searchParams;
  const choice = negotiateFormat(params, c.req.header("Accept"));
  if (!choice.ok) throw new ApiError(choice.status, choice.code, choice.message);
  // The same key again: the query it started is the answer, nothing is read or compiled.
  if (held) return { queryId: held.queryId, handle: held, format: choice.format };
  const scriptPath = params.get("scriptPath");
  if (scriptPath === null || scriptPath === "") {
    throw badRequest("BAD_PARAMETER", "missing query parameter 'scriptPath'");
  }
  if (params.getAll("scriptPath").length > 1) {
    throw badRequest("BAD_PARAMETER", "query parameter 'scriptPath' given twice");
  }
  const text = await readScript(c, deps.settings["query.maxScriptBytes"]);
  const args: Record<string, string> = {};
  for (const [name, value] of params) {
    if (RESERVED.has(name) || isOptionName(name)) continue;
    if (name === "waitMillis" && options.waitMillis) continue;
    if (text !== null) {
      throw badRequest(
        "BAD_PARAMETER",
        `unknown query parameter '${name}': a script in the body takes no arguments`,
      );
    }
    if (name in args) throw badRequest("BAD_ARGUMENT", `argument '${name}' given twice`);
    args[name] = value;
  }
  const resolved = deps.tree.resolve(user, scriptPath);
  let source: ScriptSource;
  let workDir: string;
  if (text !== null) {
    await requireDirectory(deps.tree, user, resolved);
    source = { text };
    workDir = resolved.canonical;
  } else {
    await requireScript(deps.tree, user, resolved);
    source = { path: resolved.canonical };
    workDir = dirname(resolved.canonical);
  }
  return await submitSource(deps, {
    source,
    context: queryContext(deps, user, workDir, args),
    choice,
    alwaysFix: options.alwaysFix,
    idempotencyKey: key,
    shareResult: options.shareResult,
    ...(options.listed ? { listedAs: scriptPath } : {}),
  });
}

/**
 * The one zone a query of `user` computes in (`hour(t)`, timestamps without a zone) and renders
 * its timestamps in unless `opt.timezone` says otherwise: the user's zone, else
 * `server.timeZone` (by default the zone of the server's process). One zone for both, so a row's
 * `hour(t)` and its rendered `t` always agree.
 */
export function queryZone(user: User, settings: Settings): string {
  return user.timeZone ?? settings["server.timeZone"];
}

/** The context a query of `user` runs in. */
export function queryContext(
  deps: QueryDeps,
  user: User,
  workDir: string,
  args: Readonly<Record<string, string>>,
): QueryContext {
  return {
    user,
    workDir,
    timeZone: queryZone(user, deps.settings),
    args,
    datastores: deps.datastores,
    tree: deps.tree,
    // Every per-query limit of the settings, in one object (engine/engine_limits.ts).
    limits: {
      memoryLimit: deps.settings["query.memoryLimit"],
      maxScriptBytes: deps.settings["query.maxScriptBytes"],
    },
    ...(deps.scanWorkers ? { scanWorkers: deps.scanWorkers } : {}),
  };
}

/**
 * Hands a query to the actors (compiled at once, then submitted): the 400 of its diagnostics
 * or the 429 of a full queue are thrown as ApiErrors.
 */
export async function submitSource(
  deps: QueryDeps,
  request: {
    readonly source: ScriptSource;
    readonly context: QueryContext;
    readonly choice: { readonly format: ResultFormat; readonly explicit: boolean };
    readonly alwaysFix: boolean;
    readonly idempotencyKey?: string | undefined;
    readonly shareResult?: boolean | undefined;
    /** The script path `GET /queries` shows (POST /queries); absent: shown without one. */
    readonly listedAs?: string;
  },
): Promise<PreparedQuery> {
  const queryId = newQueryId();
  const format = request.choice.format;
  const fixed: FixedFormat | undefined = request.choice.explicit || request.alwaysFix
    ? { format }
    : undefined;
  const defaultZone = request.context.timeZone;
  // A binary format is written from stored rows when fetched, a batch at a time.
  const text = rowTextOf(formatSpec(format.mediaType));
  const encoder: FragmentEncoderFactory | undefined = fixed && text
    ? Object.assign((columns: readonly string[]) => {
      fixed.columns = columns;
      // Compiled when first used: rows rendered as bytes (the usual way) never need it.
      let write: ((row: Row) => string) | undefined;
      return (row: Row) => (write ??= rowWriter(format, columns, defaultZone))(row);
    }, {
      // Rows are stored as bytes of the format, rendered where they are made.
      render: {
        format: text,
        options: {
          timeZone: format.options.timeZone ?? defaultZone,
          timestampFormat: format.options.timestampFormat,
        },
        // Each row with the body's framing around it: a body sends the bytes as stored.
        frame: (({ separator, before, after }) => ({ separator, before, after }))(
          formatSpec(format.mediaType),
        ),
      },
    })
    : undefined;
  const submitted = await deps.directory.submit(submissionDeps(deps), {
    queryId,
    source: request.source,
    context: request.context,
    encoder,
    fixedFormat: fixed,
    // An answer that waits for the query (sync, tables) fails on a warning; POST /queries not.
    ...(request.alwaysFix && format.options.failOnWarning ? { failOnWarning: true } : {}),
    idempotencyKey: request.idempotencyKey,
    shareResult: request.shareResult,
    ...(request.listedAs === undefined ? {} : { listedAs: request.listedAs }),
  });
  if (!submitted.ok) {
    if ("diagnostics" in submitted) throw diagnosticsError(submitted.diagnostics);
    if ("quotaRefused" in submitted) {
      throw new ApiError(429, "TOO_MANY_RESULTS", submitted.quotaRefused, {
        headers: { "Retry-After": "1" },
      });
    }
    throw new ApiError(
      429,
      "TOO_MANY_QUERIES",
      `the query queue is full (query.maxQueued = ${submitted.maxQueued}); retry later`,
      { headers: { "Retry-After": "1" } },
    );
  }
  return { queryId: submitted.queryId, handle: submitted.handle, format, fixed };
}

/** What the actors' front desk needs from the app's dependencies. */
export function submissionDeps(deps: QueryDeps): SubmissionDeps {
  return {
    supervisor: deps.supervisor,
    resultMemoryBytes: deps.settings["query.resultMemoryBytes"],
    resultsDir: deps.resultsDir,
    serverTimeZone: deps.settings["server.timeZone"],
    quota: deps.resultQuota,
    ...(deps.sharedQueries ? { shared: deps.sharedQueries } : {}),
  };
}

/** The script in the body, or null when the body is empty (a stored script is meant). */
export async function readScript(c: Context<AppEnv>, maxBytes: number): Promise<string | null> {
  const length = c.req.header("Content-Length");
  if (length !== undefined && Number(length) > maxBytes) throw tooLarge(maxBytes);
  const body = c.req.raw.body;
  if (body === null) return null;
  let bytes: Uint8Array;
  if (length !== undefined && Number.isSafeInteger(Number(length))) {
    // The server holds the body to its Content-Length, which is within the limit: read it in
    // one go, which costs less than iterating a stream (and check again, should it lie).
    bytes = new Uint8Array(await c.req.raw.arrayBuffer());
    if (bytes.length > maxBytes) throw tooLarge(maxBytes);
  } else bytes = await readCapped(body, maxBytes);
  if (bytes.length === 0) return null;
  const type = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!SCRIPT_CONTENT_TYPES.has(type)) {
    throw badRequest(
      "BAD_PARAMETER",
      `a script in the body needs 'Content-Type: ${SCRIPT_CONTENT_TYPE}' (or text/plain), found ${
        type === "" ? "none" : `'${type}'`
      }`,
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw badRequest("BAD_PARAMETER", "the script in the body is not valid UTF-8");
  }
}

/** A body without a Content-Length (chunked), read until it passes `maxBytes` (413). */
async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(
    413,
    "PAYLOAD_TOO_LARGE",
    `the script is larger than ${maxBytes} bytes (query.maxScriptBytes)`,
  );
}

async function statOf(tree: ResourceTree, resolved: { canonical: string; real: string }) {
  try {
    const real = await tree.realPath(resolved);
    // Synchronous: a local stat takes microseconds, the asynchronous op ten times that.
    if (tree.hostFiles) return Deno.statSync(real);
    const info = await tree.stat(real);
    return info && { isDirectory: info.isFolder, isFile: !info.isFolder };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** A working directory needs execute and list rights (specification, Errors point 3). */
export async function requireDirectory(
  tree: ResourceTree,
  user: User,
  resolved: { canonical: string; real: string },
): Promise<void> {
  const canSee = tree.may(user, "list", resolved.canonical) ||
    tree.may(user, "read", resolved.canonical);
  const stat = await statOf(tree, resolved);
  if (!stat || !stat.isDirectory || !canSee) {
    throw notFound(`no such folder: ${resolved.canonical}`);
  }
  for (const right of ["execute", "list"] as const) {
    if (!tree.may(user, right, resolved.canonical)) {
      throw forbidden(
        `you need the ${right} right on the working directory ${resolved.canonical}`,
      );
    }
  }
}

/** The extension of stored scripts; no other file is run as one. */
const SCRIPT_EXTENSION = ".sx";

/**
 * A stored script must be a `.sx` file that exists, is seen, and may be both executed and read:
 * running a file shows what it says (a syntax error quotes it), so execute alone is not enough.
 * The name is checked first, so that the answer for another file says nothing of its existence.
 */
async function requireScript(
  tree: ResourceTree,
  user: User,
  resolved: { canonical: string; real: string },
): Promise<void> {
  if (!resolved.canonical.endsWith(SCRIPT_EXTENSION)) {
    throw badRequest(
      "BAD_PARAMETER",
      `scriptPath '${resolved.canonical}' names no script: stored scripts are '${SCRIPT_EXTENSION}' files`,
    );
  }
  const stat = await statOf(tree, resolved);
  // Seen as /resources and `@[...]` see it (list or read): one may see a script and still not
  // run it (403), and a script one may not see is 404 whether it exists or not.
  const canSee = tree.may(user, "list", resolved.canonical) ||
    tree.may(user, "read", resolved.canonical);
  if (!stat || !stat.isFile || !canSee) {
    throw notFound(`no such script: ${resolved.canonical}`);
  }
  for (const right of ["execute", "read"] as const) {
    if (!tree.may(user, right, resolved.canonical)) {
      throw forbidden(`you need the execute and read rights on the script ${resolved.canonical}`);
    }
  }
}

/** Longest `Idempotency-Key` accepted. */
const MAX_IDEMPOTENCY_KEY = 255;

/** The request's `Idempotency-Key` (visible ASCII, 1 to 255 characters), or undefined. */
export function idempotencyKeyOf(c: Context<AppEnv>): string | undefined {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e]+$/.test(key)) {
    throw badRequest(
      "BAD_PARAMETER",
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY} visible ASCII characters`,
    );
  }
  return key;
}

/** Longest `waitMillis` accepted (API.md: N ≤ 60 000). */
export const MAX_WAIT_MILLIS = 60_000;

/** `waitMillis` of the query string: an integer 0..60000, or undefined when absent. */
export function waitMillisOf(params: URLSearchParams): number | undefined {
  const all = params.getAll("waitMillis");
  if (all.length === 0) return undefined;
  if (all.length > 1) throw badRequest("BAD_PARAMETER", "query parameter 'waitMillis' given twice");
  const text = all[0]!;
  const n = Number(text);
  if (!/^\d{1,6}$/.test(text) || n > MAX_WAIT_MILLIS) {
    throw badRequest(
      "BAD_PARAMETER",
      `waitMillis must be an integer from 0 to ${MAX_WAIT_MILLIS}, found '${text}'`,
    );
  }
  return n;
}
