/**
 * The API's contract: one entry per route (method, path, summary, the zod schemas of its query
 * string and body, its answers). The same schemas validate the requests (`validated(...)`, a
 * Hono middleware the routes put in front of their handlers: 400 BAD_PARAMETER naming each
 * problem) and make `GET /API/v1.0/openapi.json` (OpenAPI 3.1, with zod's `z.toJSONSchema`).
 *
 * A route added without an entry here is caught by tests/api/openapi_test.ts, which checks that
 * every route Hono has is in the document.
 */

import { z } from "zod";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env.ts";
import { badRequest } from "./errors.ts";
import { MAX_WAIT_MILLIS } from "./query_request.ts";

type Method = "get" | "post" | "put" | "delete";

interface Answer {
  readonly description: string;
  readonly contentType?: string;
  readonly schema?: z.ZodType;
}

export interface RouteContract {
  readonly method: Method;
  /** The OpenAPI path (`/API/v1.0/queries/{id}`); `{path}` stands for the rest of the path. */
  readonly path: string;
  readonly summary: string;
  /** No token needed. */
  readonly open?: boolean;
  readonly query?: z.ZodObject;
  readonly body?: {
    readonly contentType: readonly string[];
    readonly schema: z.ZodType;
    /** The schema the document shows, given the registered datastore kinds' types. */
    readonly withKinds?: (datastoreTypes: [string, ...string[]]) => z.ZodType;
  };
  readonly responses: Readonly<Record<string, Answer>>;
}

const API = "/API/v1.0";

const trueFalse = (name: string) =>
  z.enum(["true", "false"], { error: `${name} must be 'true' or 'false'` });

/** The rendering options of result routes (routes/formats.ts checks them further). */
const formatQuery = {
  acceptContentType: z.string().optional().describe("a result media type; wins over Accept"),
  "opt.timezone": z.string().optional().describe("IANA zone for TIMESTAMP values"),
  "opt.timestampFormat": z.string().max(100).optional().describe("a time pattern"),
  "opt.timestampNanoFormat": z.string().max(100).optional().describe(
    "synonym of opt.timestampFormat",
  ),
  "opt.omitHeader": trueFalse("opt.omitHeader").optional(),
};

const scriptPath = z.string().min(1, "missing query parameter 'scriptPath'");

const waitMillis = z.string()
  .regex(/^\d{1,6}$/, `waitMillis must be an integer from 0 to ${MAX_WAIT_MILLIS}`)
  .refine(
    (s) => Number(s) <= MAX_WAIT_MILLIS,
    `waitMillis must be an integer from 0 to ${MAX_WAIT_MILLIS}`,
  )
  .describe("answer 200 with the finished status if the query finishes within this many ms");

/** View arguments of a stored script are any other parameter. */
const submitQuery = z.object({
  scriptPath: scriptPath.describe("a stored .sx script, or the working directory of the body"),
  ...formatQuery,
  "opt.failOnWarning": trueFalse("opt.failOnWarning").optional(),
}).catchall(z.string());

const SCRIPT_BODY = {
  contentType: ["text/vnd.engine.script", "text/plain"],
  schema: z.string().describe("the script; empty to run the stored script of scriptPath"),
} as const;

const ErrorBody = z.object({ code: z.string(), message: z.string() }).loose();

const QueryState = z.enum(["QUEUED", "SCHEDULED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"]);

const Status = z.object({
  queryId: z.uuid(),
  state: QueryState,
  progress: z.number().min(0).max(1),
  warnings: z.array(z.object({
    time: z.string(),
    level: z.enum(["INFO", "WARN", "ERROR"]),
    message: z.string(),
  })),
  stateChanges: z.array(z.object({
    millis: z.number(),
    from: z.string(),
    to: QueryState,
  })),
  stats: z.object({
    filesRead: z.number().int(),
    bytesRead: z.number().int(),
    recordsRead: z.number().int(),
    recordsUnmatched: z.number().int(),
    rowsOut: z.number().int(),
    cloudRequests: z.number().int(),
    cloudLost: z.number().int(),
    cacheBytes: z.number().int(),
    cacheBlocks: z.number().int(),
    cacheBlocksSkipped: z.number().int(),
    elapsedMillis: z.number(),
    etaMillis: z.number().int().optional(),
  }),
  error: z.object({ code: z.string(), message: z.string() }).loose().optional(),
});

const Rows = { description: "the rows, in the negotiated format (Range: items=...)" };
const err = (description: string): Answer => ({ description, schema: ErrorBody });

export const CONTRACTS = {
  health: {
    method: "get",
    path: "/healthz",
    summary: "liveness",
    open: true,
    responses: { "200": { description: "the server is up" } },
  },
  metrics: {
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics (an admin's token unless metrics.public = true)",
    responses: {
      "200": { description: "Prometheus text format", contentType: "text/plain" },
      "403": err("not an admin"),
    },
  },
  console: {
    method: "get",
    path: "/",
    summary: "the web console's page (docs/console.md); no token",
    open: true,
    responses: { "200": { description: "HTML", contentType: "text/html" } },
  },
  consoleScript: {
    method: "get",
    path: "/console.js",
    summary: "the web console's script; no token",
    open: true,
    responses: { "200": { description: "JavaScript", contentType: "text/javascript" } },
  },
  consoleStyle: {
    method: "get",
    path: "/console.css",
    summary: "the web console's style sheet; no token",
    open: true,
    responses: { "200": { description: "CSS", contentType: "text/css" } },
  },
  language: {
    method: "get",
    path: `${API}/language`,
    summary:
      "the language's commands, functions, matchers and sources, with their help (for editors)",
    responses: { "200": { description: "the names, by kind" } },
  },
  machines: {
    method: "get",
    path: `${API}/machines`,
    summary: "the state machines the server runs, and their live numbers (connectors: admins)",
    responses: { "200": { description: "machine definitions and live state" } },
  },
  patternTry: {
    method: "post",
    path: `${API}/patterns/try`,
    summary: "a PARSE pattern tried on sample lines: each line's fields, or no match",
    body: {
      contentType: ["application/json"],
      schema: z.object({ pattern: z.string(), lines: z.array(z.string()).max(1000) }),
    },
    responses: {
      "200": { description: "per line, its fields or null" },
      "400": err("the pattern does not compile"),
      "413": err("a body over 1 MiB"),
    },
  },
  sigmaConvert: {
    method: "post",
    path: `${API}/sigma/convert`,
    summary: "Sigma rules (YAML) converted to Trawl scripts, or why not (docs/detections.md)",
    body: {
      contentType: ["application/yaml", "text/plain", "application/json"],
      schema: z.string(),
    },
    responses: {
      "200": { description: "per rule: script, sources and mapped fields, or a typed reason" },
      "400": err("no rule, or a bad target or store name"),
      "409": err("a mapping file in /system/sigma is not valid"),
      "413": err("a body over 1 MiB"),
    },
  },
  sigmaTest: {
    method: "post",
    path: `${API}/sigma/test`,
    summary: "a Sigma rule run over the records in the body",
    body: {
      contentType: ["application/json"],
      schema: z.object({ rule: z.string(), records: z.array(z.unknown()).max(10000) }),
    },
    responses: {
      "200": { description: "the conversion and the records that match" },
      "400": err("not one rule, or not the body's form"),
      "409": err("a mapping file in /system/sigma is not valid"),
      "413": err("a body over 1 MiB"),
    },
  },
  sigmaMappings: {
    method: "get",
    path: `${API}/sigma/mappings`,
    summary: "the Sigma field mappings in effect, and where each comes from",
    responses: { "200": { description: "the mappings" }, "409": err("a bad mapping file") },
  },
  schedulesCreate: {
    method: "post",
    path: `${API}/schedules`,
    summary: "a scheduled detection: a script or Sigma rule every N minutes or on a cron",
    body: { contentType: ["application/json"], schema: z.object({ name: z.string() }) },
    responses: {
      "201": { description: "the schedule (its webhook secret hidden)" },
      "400": err("not a schedule, or a rule that does not convert"),
      "403": err("runAs another user, not being an admin"),
      "413": err("a body over 1 MiB + 64 KiB"),
    },
  },
  schedulesList: {
    method: "get",
    path: `${API}/schedules`,
    summary: "your schedules (an admin's: all) with their state and next run",
    responses: { "200": { description: "the schedules" } },
  },
  scheduleRead: {
    method: "get",
    path: `${API}/schedules/{id}`,
    summary: "a schedule",
    responses: { "200": { description: "the schedule" }, "404": err("no such schedule of yours") },
  },
  scheduleReplace: {
    method: "put",
    path: `${API}/schedules/{id}`,
    summary: "a schedule replaced (a webhook without a secret keeps the old one)",
    body: { contentType: ["application/json"], schema: z.object({ name: z.string() }) },
    responses: {
      "200": { description: "the schedule" },
      "400": err("not a schedule"),
      "404": err("no such schedule of yours"),
      "413": err("a body over 1 MiB + 64 KiB"),
    },
  },
  scheduleDelete: {
    method: "delete",
    path: `${API}/schedules/{id}`,
    summary: "a schedule deleted",
    responses: { "204": { description: "deleted" }, "404": err("no such schedule of yours") },
  },
  scheduleRun: {
    method: "post",
    path: `${API}/schedules/{id}/run`,
    summary: "a schedule run now over an explicit window (a backfill)",
    body: {
      contentType: ["application/json"],
      schema: z.object({ from: z.string(), to: z.string() }),
    },
    responses: {
      "200": { description: "the run: query id, matches, alerts, duplicates" },
      "400": err("not two ISO times, from < to"),
      "404": err("no such schedule of yours"),
      "409": err("running on a server now"),
      "413": err("a body over 1 MiB + 64 KiB"),
    },
  },
  scheduleRuns: {
    method: "get",
    path: `${API}/schedules/{id}/runs`,
    summary: "a schedule's runs, newest first",
    responses: { "200": { description: "the runs" }, "404": err("no such schedule of yours") },
  },
  scheduleAlerts: {
    method: "get",
    path: `${API}/schedules/{id}/alerts`,
    summary: "a schedule's alerts and their delivery state (?state=dead)",
    responses: { "200": { description: "the alerts" }, "404": err("no such schedule of yours") },
  },
  scheduleRedeliver: {
    method: "post",
    path: `${API}/schedules/{id}/alerts/{alert}/redeliver`,
    summary: "an alert delivered again",
    responses: { "200": { description: "the alert" }, "404": err("no such alert") },
  },
  openapi: {
    method: "get",
    path: `${API}/openapi.json`,
    summary: "this document",
    open: true,
    responses: { "200": { description: "OpenAPI 3.1", contentType: "application/json" } },
  },
  whoami: {
    method: "get",
    path: `${API}/whoami`,
    summary: "the caller",
    responses: { "200": { description: "the user the token belongs to" } },
  },
  submit: {
    method: "post",
    path: `${API}/queries`,
    summary: "start a query",
    query: submitQuery.extend({ waitMillis: waitMillis.optional() }),
    body: SCRIPT_BODY,
    responses: {
      "200": { description: "finished within waitMillis: its status", schema: Status },
      "201": { description: "started", schema: z.object({ queryId: z.uuid() }) },
      "400": err("a mistake in the request or the script"),
      "429": err("the queue or the user's results are full"),
    },
  },
  // The next three are served by the console's routes (another branch; API.md describes them).
  listQueries: {
    method: "get",
    path: `${API}/queries`,
    summary: "the caller's retained queries, newest first (admins: everyone's)",
    query: z.object({ user: z.string().optional().describe("admins: only this user's") }),
    responses: { "200": { description: "a list of queries" } },
  },
  events: {
    method: "get",
    path: `${API}/queries/{id}/events`,
    summary: "a query's events as server-sent events (Last-Event-ID resumes)",
    responses: {
      "200": {
        description: "status, state, progress, warning, stats",
        contentType: "text/event-stream",
      },
      "404": err("no such query"),
    },
  },
  testDatastore: {
    method: "post",
    path: `${API}/datastores/{name}/test`,
    summary: "try a datastore's credentials and one cheap read per family (admins)",
    responses: { "200": { description: "per family: ok and message" } },
  },
  status: {
    method: "get",
    path: `${API}/queries/{id}`,
    summary: "a query's status",
    responses: {
      "200": { description: "the status", schema: Status },
      "404": err("no such query"),
      "410": err("expired"),
    },
  },
  cancel: {
    method: "delete",
    path: `${API}/queries/{id}`,
    summary: "cancel a query, or free a finished one",
    responses: {
      "200": { description: "cancelled: the status", schema: Status },
      "204": { description: "freed" },
      "404": err("no such query"),
    },
  },
  result: {
    method: "get",
    path: `${API}/queries/{id}/result`,
    summary: "a succeeded query's rows; with Range, a RUNNING query's rows so far",
    query: z.object(formatQuery),
    responses: {
      "200": Rows,
      "206": {
        description: "the rows of the range; while RUNNING the rows so far " +
          "(Trawl-Query-State, Trawl-Rows-So-Far, Content-Range total *)",
      },
      "409": err("not succeeded (and not RUNNING, for a Range)"),
      "416": err("range not satisfiable"),
    },
  },
  resultSchema: {
    method: "get",
    path: `${API}/queries/{id}/result/schema`,
    summary: "a succeeded query's schema",
    responses: { "200": { description: "the schema as JSON" }, "409": err("not succeeded") },
  },
  sync: {
    method: "post",
    path: `${API}/`,
    summary: "run a query and answer with its rows (Trawl-Query-Id, Trawl-Warnings)",
    query: submitQuery,
    body: SCRIPT_BODY,
    responses: {
      "200": Rows,
      "206": Rows,
      "400": err("a mistake in the request or the script"),
      "409": err("the query failed (or warned, with opt.failOnWarning=true)"),
    },
  },
  tables: {
    method: "get",
    path: `${API}/tables/{path}`,
    summary: "the rows of a stored table",
    query: z.object(formatQuery),
    responses: {
      "200": Rows,
      "404": err("no such table"),
      "409": err("CORRUPT_TABLE: the file is not a whole table"),
    },
  },
  check: {
    method: "post",
    path: `${API}/check`,
    summary: "check a script without running it",
    query: z.object({ scriptPath: scriptPath.optional() }),
    body: SCRIPT_BODY,
    responses: {
      "200": {
        description: "diagnostics and the planned schema",
        schema: z.object({
          ok: z.boolean(),
          diagnostics: z.array(z.object({ code: z.string(), message: z.string() }).loose()),
          schema: z.record(z.string(), z.unknown()).nullable(),
        }),
      },
    },
  },
  datastoreKinds: {
    method: "get",
    path: `${API}/datastore-kinds`,
    summary: "the kinds of datastore there are: type, scheme, store key, secret and bound keys",
    responses: {
      "200": {
        description: "a list, sorted by type",
        schema: z.array(z.object({
          type: z.string(),
          scheme: z.string(),
          storeKey: z.string(),
          description: z.string(),
          secretKeys: z.array(z.string()),
          boundKeys: z.array(z.string()),
        })),
      },
    },
  },
  datastores: {
    method: "get",
    path: `${API}/datastores`,
    summary: "the datastores the caller may read",
    responses: { "200": { description: "a list" } },
  },
  datastore: {
    method: "get",
    path: `${API}/datastores/{name}`,
    summary: "a datastore's definition, without its secret",
    responses: { "200": { description: "the definition" }, "404": err("no such datastore") },
  },
  putDatastore: {
    method: "put",
    path: `${API}/datastores/{name}`,
    summary: "define a datastore (admins)",
    body: {
      contentType: ["application/json"],
      // The enum of `type` is the registered kinds' (openApiDocument's `datastoreTypes`).
      schema: z.object({ type: z.string() }).loose(),
      withKinds: (types) => z.object({ type: z.enum(types) }).loose(),
    },
    responses: {
      "200": { description: "replaced" },
      "201": { description: "created" },
      "400": err("BAD_DATASTORE, one problem each"),
    },
  },
  deleteDatastore: {
    method: "delete",
    path: `${API}/datastores/{name}`,
    summary: "remove a datastore (admins)",
    responses: { "204": { description: "removed" }, "404": err("no such datastore") },
  },
  script: {
    method: "get",
    path: `${API}/scripts/{path}`,
    summary: "a stored script's text",
    responses: { "200": { description: "the script" }, "404": err("no such script") },
  },
  getResource: {
    method: "get",
    path: `${API}/resources/{path}`,
    summary: "a folder's listing or a file's bytes",
    responses: { "200": { description: "the listing or the file" }, "404": err("not found") },
  },
  preview: {
    method: "get",
    path: `${API}/preview/{path}`,
    summary: "the first lines of a file (at most 64 KiB read), with its size and date",
    query: z.object({
      lines: z.string()
        .regex(/^\d{1,3}$/, "lines must be an integer from 1 to 200")
        .refine((s) => Number(s) >= 1 && Number(s) <= 200, "lines must be an integer from 1 to 200")
        .describe("how many lines, at most (20 by default)")
        .optional(),
    }).strict(),
    responses: {
      "200": { description: "{path, size, modified, lines, complete}" },
      "403": err("no read right on a file one may list"),
      "404": err("not found, or not visible"),
    },
  },
  putResource: {
    method: "put",
    path: `${API}/resources/{path}`,
    summary: "create or replace a file (If-Match, If-None-Match); a path ending in / a folder",
    body: { contentType: ["application/octet-stream"], schema: z.string() },
    responses: {
      "200": { description: "replaced" },
      "201": { description: "created" },
      "412": err("precondition failed"),
      "413": err("over resource.maxBytes"),
    },
  },
  deleteResource: {
    method: "delete",
    path: `${API}/resources/{path}`,
    summary: "remove a file or folder",
    query: z.object({ recursive: trueFalse("recursive").optional() }),
    responses: { "204": { description: "removed" }, "404": err("not found") },
  },
  moveResource: {
    method: "post",
    path: `${API}/resources/{path}`,
    summary: "move or rename",
    query: z.object({ moveTo: z.string().min(1, "expected ?moveTo=<path>") }),
    responses: { "200": { description: "moved" }, "404": err("not found") },
  },
} as const satisfies Record<string, RouteContract>;

/**
 * Checks the query string against the contract's schema: 400 BAD_PARAMETER naming every
 * problem. (Each value is the parameter's first; the handlers refuse repeated ones.)
 */
export function validated(contract: RouteContract) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (contract.query) {
      const params = Object.fromEntries(new URL(c.req.url).searchParams);
      const parsed = contract.query.safeParse(params);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => {
          const name = issue.path.join(".");
          if (issue.code === "invalid_type" && params[name] === undefined) {
            return `missing query parameter '${name}'`;
          }
          return issue.message.includes(name)
            ? issue.message
            : `query parameter '${name}': ${issue.message}`;
        });
        throw badRequest("BAD_PARAMETER", [...new Set(problems)].join("; "));
      }
    }
    await next();
  });
}

/** A contract's body schema as the document shows it (with the kinds' types where it takes them). */
function bodySchema(contract: RouteContract, types: readonly string[]): z.ZodType {
  const body = contract.body!;
  return body.withKinds && types.length > 0
    ? body.withKinds(types as [string, ...string[]])
    : body.schema;
}

/** JSON Schema (2020-12, as OpenAPI 3.1 takes it) of a zod schema, without `$schema`. */
function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * The OpenAPI 3.1 document of every contract; `datastoreTypes` (the registered kinds') are the
 * enum of a datastore definition's `type`.
 */
export function openApiDocument(
  version: string,
  options: { readonly datastoreTypes?: readonly string[] } = {},
): Record<string, unknown> {
  const types = options.datastoreTypes ?? [];
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [id, contract] of Object.entries(CONTRACTS) as [string, RouteContract][]) {
    const parameters: Record<string, unknown>[] = [];
    for (const [, name] of contract.path.matchAll(/\{(\w+)\}/g)) {
      parameters.push({ name, in: "path", required: true, schema: { type: "string" } });
    }
    if (contract.query) {
      for (const [name, field] of Object.entries(contract.query.shape)) {
        const schema = field as z.ZodType;
        parameters.push({
          name,
          in: "query",
          required: !schema.safeParse(undefined).success,
          schema: jsonSchema(schema),
        });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [code, answer] of Object.entries(contract.responses) as [string, Answer][]) {
      responses[code] = {
        description: answer.description,
        ...(answer.schema
          ? {
            content: {
              [answer.contentType ?? "application/json"]: { schema: jsonSchema(answer.schema) },
            },
          }
          : {}),
      };
    }
    (paths[contract.path] ??= {})[contract.method] = {
      operationId: id,
      summary: contract.summary,
      ...(contract.open ? { security: [] } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(contract.body
        ? {
          requestBody: {
            content: Object.fromEntries(
              contract.body.contentType.map((
                t,
              ) => [t, { schema: jsonSchema(bodySchema(contract, types)) }]),
            ),
          },
        }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "Trawl", version, description: "The log-query server's HTTP API." },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}
