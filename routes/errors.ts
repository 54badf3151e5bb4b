/**
 * The one error class for HTTP answers and the one handler that turns every error into the
 * body of API.md: `{"code": ..., "message": ..., ...extra}` with a JSON content type.
 * Anything that is not an ApiError (or a refused path, or a Hono HTTPException) is a bug: a
 * 500 `INTERNAL` whose details go to the log only.
 */

import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type Diagnostic, formatDiagnostic, PathError, StorageError } from "../engine/mod.ts";
import type { Logger } from "../home/log.ts";
import { sendJson } from "./json.ts";

export interface ApiErrorOptions {
  /** Fields added to the body beside code and message (e.g. `line`, `state`). */
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
  /** Headers of the answer (e.g. `WWW-Authenticate`, `Retry-After`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** An answer other than success, as API.md lists them. */
export class ApiError extends Error {
  readonly extra: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  /** The body of the answer; code and message cannot be overridden by `extra`. */
  body(): Record<string, unknown> {
    return { ...this.extra, code: this.code, message: this.message };
  }
}

export function badRequest(code: string, message: string, extra?: Record<string, unknown>) {
  return new ApiError(400, code, message, { extra });
}

export function unauthenticated(message: string, invalidToken = false): ApiError {
  const challenge = invalidToken
    ? 'Bearer realm="trawl", error="invalid_token"'
    : 'Bearer realm="trawl"';
  return new ApiError(401, "UNAUTHENTICATED", message, {
    headers: { "WWW-Authenticate": challenge },
  });
}

export function forbidden(message: string): ApiError {
  return new ApiError(403, "FORBIDDEN", message);
}

export function notFound(message: string): ApiError {
  return new ApiError(404, "NOT_FOUND", message);
}

const DIAGNOSTIC_STATUS: Readonly<Partial<Record<Diagnostic["code"], ContentfulStatusCode>>> = {
  NOT_FOUND: 404,
  FORBIDDEN: 403,
  CORRUPT_TABLE: 409,
  LICENSE_REQUIRED: 403,
};

/**
 * The API's code for a diagnostic (API.md, "Errors"): every way a script fails to parse or check
 * is a SYNTAX_ERROR; the precise kind stays in the body's `diagnostics[].code`.
 */
const DIAGNOSTIC_API_CODE: Readonly<Partial<Record<Diagnostic["code"], string>>> = {
  UNKNOWN_NAME: "SYNTAX_ERROR",
  ARITY: "SYNTAX_ERROR",
  TYPE_ERROR: "SYNTAX_ERROR",
  NO_RESULT: "SYNTAX_ERROR",
  RECURSION: "SYNTAX_ERROR",
};

/** The answer to a script that does not parse or check: the first problem, and all of them. */
export function diagnosticsError(diagnostics: readonly Diagnostic[]): ApiError {
  const first = diagnostics[0]!;
  const code = DIAGNOSTIC_API_CODE[first.code] ?? first.code;
  return new ApiError(DIAGNOSTIC_STATUS[first.code] ?? 400, code, formatDiagnostic(first), {
    extra: {
      ...(first.line !== undefined ? { line: first.line, column: first.column } : {}),
      ...(first.script !== undefined ? { script: first.script } : {}),
      diagnostics,
    },
  });
}

const STATUS_CODES: Readonly<Record<number, string>> = {
  400: "BAD_PARAMETER",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  406: "NOT_ACCEPTABLE",
  413: "PAYLOAD_TOO_LARGE",
  416: "RANGE_NOT_SATISFIABLE",
  429: "TOO_MANY_QUERIES",
};

/** The ApiError an error stands for, or undefined when it is a bug. */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof PathError) return badRequest("BAD_PARAMETER", error.message);
  // The state's storage (a KV) failing is not a bug of the server: the client may try again.
  if (error instanceof StorageError) {
    return new ApiError(503, "STORAGE_UNAVAILABLE", error.publicMessage, {
      headers: { "Retry-After": "5" },
    });
  }
  if (error instanceof HTTPException && error.status < 500) {
    const status = error.status as ContentfulStatusCode;
    return new ApiError(
      status,
      STATUS_CODES[status] ?? "BAD_REQUEST",
      error.message || "bad request",
    );
  }
  return undefined;
}

/** Sends an ApiError as the answer. */
export function sendError(c: Context, error: ApiError): Response {
  return sendJson(c, error.body(), error.status, error.headers);
}

/** The app's one `onError`: known errors as documented, anything else as a logged 500. */
export function errorHandler(log: Logger): ErrorHandler {
  return (error, c) => {
    // For the admin: which storage failed and why (the client is told without host paths).
    if (error instanceof StorageError) log.warn(`${c.req.method} ${c.req.path}: ${error.message}`);
    const known = toApiError(error);
    if (known) return sendError(c, known);
    log.error(`unexpected error in ${c.req.method} ${c.req.path}`, error);
    return sendError(
      c,
      new ApiError(
        500,
        "INTERNAL",
        "internal error: this is a bug; the server log has the details",
      ),
    );
  };
}

/** The JSON 404 for routes that do not exist. */
export const notFoundHandler: NotFoundHandler = (c) =>
  sendError(c, notFound(`no such resource: ${c.req.method} ${c.req.path}`));
