/**
 * The console's only way to the server: the documented HTTP API under /API/v1.0, with the
 * token the person signed in with (kept in sessionStorage, sent as a Bearer header, never in a
 * URL).
 */

export const API = "/API/v1.0";
const TOKEN_KEY = "trawl.token";

/** An answer that was not 2xx: the API's `{code, message, ...}` body, or the status line. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** A request to `path` under /API/v1.0; throws ApiFailure unless the answer is 2xx or 304. */
export async function api(
  path: string,
  init: RequestInit & { readonly token?: string } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = init.token ?? storedToken();
  if (token) headers.set("Authorization", `Bearer ${token}`);
  const res = await fetch(API + path, { ...init, headers });
  if (res.ok || res.status === 304) return res;
  let body: Record<string, unknown> = {};
  try {
    body = await res.json();
  } catch {
    // not JSON: the status line says it
  }
  throw new ApiFailure(
    res.status,
    String(body.code ?? res.status),
    String(body.message ?? `${res.status} ${res.statusText}`),
    body,
  );
}

export async function apiJson<T>(path: string, init: RequestInit = {}): Promise<T> {
  return await (await api(path, init)).json() as T;
}

/** Posts a script text as `text/plain`. */
export function scriptInit(text: string, init: RequestInit = {}): RequestInit {
  return { ...init, method: "POST", headers: { "Content-Type": "text/plain" }, body: text };
}

export interface Whoami {
  readonly name: string;
  readonly groups: readonly string[];
  readonly admin: boolean;
}

export interface Diagnostic {
  readonly code: string;
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

export interface CheckAnswer {
  readonly ok: boolean;
  readonly diagnostics: readonly Diagnostic[];
  readonly schema: Record<string, string> | null;
}

export interface Language {
  readonly commands: readonly string[];
  readonly sources: readonly string[];
  readonly functions: readonly {
    name: string;
    minArgs: number;
    maxArgs: number | null;
    aggregate: boolean;
  }[];
  readonly matchers: readonly string[];
  readonly keywords: readonly string[];
  readonly help: readonly {
    readonly kind: "command" | "source" | "function" | "matcher";
    readonly name: string;
    readonly signature: string;
    readonly description: string;
  }[];
}

export interface QueryStatus {
  readonly queryId: string;
  readonly state: string;
  readonly progress: number;
  readonly warnings: readonly { time: string; level: string; message: string }[];
  readonly stateChanges: readonly { millis: number; from: string; to: string }[];
  readonly error?: Diagnostic;
  /** What it has read and made (docs/api.md, the status object's `stats`). */
  readonly stats?: {
    readonly rowsOut?: number;
    readonly elapsedMillis?: number;
    readonly bytesRead?: number;
    readonly recordsRead?: number;
    readonly etaMillis?: number;
  };
}

export const FINISHED = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);
