/**
 * The HTTP server with its connections bounded: Deno.serve has no limit on connections and no
 * timeout for unfinished headers, and an accept that fails for want of file descriptors ends
 * its `finished` (and the process with it). So the TCP port is ours: a front accepts each
 * connection, counts it, and hands it to Deno.serve (listening on a private Unix socket) only
 * once its first request's headers are complete; from then on it copies bytes both ways.
 *
 * - `maxConnections` (`server.maxConnections`, which main.ts lowers to what the process's file
 *   descriptor limit allows, `connectionsAllowedByFds`): when full, the connection waiting
 *   longest for headers or idle longest is closed to make room; without one, the new connection
 *   gets a 503 naming the setting.
 * - `headersTimeoutMs` (`server.headersTimeout`): a request whose headers are not complete
 *   within it is closed, the first as well as later ones on a kept-alive connection.
 * - `idleTimeoutMs` (`server.idleTimeout`): a connection whose last response has been sent and
 *   that says nothing more for so long is closed. A request being answered has no limit here:
 *   a synchronous query may take minutes before its first byte.
 * - An accept that fails (EMFILE) never ends the server: it closes an idle connection if there
 *   is one, waits a moment and accepts again.
 *
 *   const server = await serveGuarded(app.fetch, { hostname, port, ...limits, log });
 *   await server.finished;
 */

import { join } from "node:path";
import type { Logger } from "../home/log.ts";

export interface ConnectionLimits {
  readonly maxConnections: number;
  readonly headersTimeoutMs: number;
  readonly idleTimeoutMs: number;
}

export interface GuardedServerOptions extends ConnectionLimits {
  readonly hostname: string;
  readonly port: number;
  readonly log: Logger;
  /** Aborting it stops the server gracefully. */
  readonly signal?: AbortSignal | undefined;
}

export interface GuardedServer {
  readonly addr: Deno.NetAddr;
  /** Connections open now. */
  readonly connections: () => number;
  /** Settles when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops accepting, waits for the requests in flight, closes every connection. */
  shutdown(): Promise<void>;
}

/** Headers larger than this are refused (431), as most servers do. */
const MAX_HEADER_BYTES = 64 * 1024;
/** File descriptors kept for everything but connections: results, tables, logs. */
const RESERVED_FDS = 128;
const CRLFCRLF = [13, 10, 13, 10];
/** The most a connection's copy reads at once (it starts at 64 KiB). */
const PUMP_MAX = 256 * 1024;

/** Where a connection is: reading headers, a request being answered, or idle after one. */
type Phase = "headers" | "request" | "idle";

interface Connection {
  readonly socket: Deno.TcpConn;
  phase: Phase;
  /** When the current phase began (headers: the request's first byte, idle: the response's last). */
  since: number;
  /** The last bytes seen while reading headers, to find `\r\n\r\n` across reads. */
  tail: number[];
  headerBytes: number;
  backend?: Deno.UnixConn;
  closed: boolean;
  /** Settles when the connection has been closed, whatever ended it. */
  ended?: Promise<void>;
}

/** Serves `handler` on hostname:port with the limits above. */
export async function serveGuarded(
  handler: Deno.ServeHandler<Deno.UnixAddr>,
  options: GuardedServerOptions,
): Promise<GuardedServer> {
  const { log, maxConnections } = options;
  const socketDir = await Deno.makeTempDir({ prefix: "trawl-http-" });
  const socketPath = join(socketDir, "http.sock");
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const open = new Set<Connection>();
  let stopping = false;

  // Errors that reach Deno.serve rather than the app's own handler: a body stream that broke
  // (a result freed while it was read) ends its response broken, and the log says why.
  const backendOptions = {
    path: socketPath,
    onListen: () => {},
    onError: (e: unknown) => {
      if (e instanceof Error && e.name === "ResultDroppedError") {
        log.warn(`a response ended broken: ${e.message}`);
      } else log.error("a response failed after it had begun", e);
      return new Response(null, { status: 500 });
    },
  };
  // The back end: Deno.serve on the private socket, started again should it ever fail.
  let backend = Deno.serve(backendOptions, handler);
  const backendLoop = (async () => {
    while (true) {
      try {
        await backend.finished;
      } catch (e) {
        log.error("the HTTP back end stopped; starting it again", e);
      }
      if (stopping) return;
      await delay(100);
      await Deno.remove(socketPath).catch(() => {});
      if (stopping) return;
      backend = Deno.serve(backendOptions, handler);
    }
  })();

  const close = (conn: Connection) => {
    if (conn.closed) return;
    conn.closed = true;
    open.delete(conn);
    closeQuietly(conn.socket);
    if (conn.backend) closeQuietly(conn.backend);
  };

  /**
   * Closes the connection that has waited longest for headers or been idle longest (one that
   * received bytes within the last second may be streaming a response, and is left alone).
   */
  const evictOne = (): boolean => {
    const now = Date.now();
    let victim: Connection | undefined;
    for (const conn of open) {
      if (conn.phase === "request" || (conn.phase === "idle" && now - conn.since < 1000)) continue;
      if (!victim || conn.since < victim.since) victim = conn;
    }
    if (victim) close(victim);
    return victim !== undefined;
  };

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const conn of open) {
      if (
        (conn.phase === "headers" && now - conn.since > options.headersTimeoutMs) ||
        (conn.phase === "idle" && now - conn.since > options.idleTimeoutMs)
      ) close(conn);
    }
  }, Math.max(50, Math.min(1000, options.headersTimeoutMs / 4, options.idleTimeoutMs / 4)));

  const serveConnection = async (conn: Connection) => {
    try {
      const first = await readHeaders(conn);
      if (first === null) return;
      conn.backend = await Deno.connect({ transport: "unix", path: socketPath });
      if (conn.closed) return;
      await writeAll(conn.backend, first);
      // A client that stops sending may still be owed an answer (its end is passed on as a
      // half-close); a client that fails closes the connection, which cancels its request.
      pump(conn.socket, conn.backend, (bytes) => fromClient(conn, bytes)).catch(() => close(conn));
      // When the back end is done with the connection (Connection: close, an error, shutdown),
      // so is the client.
      await pump(conn.backend, conn.socket, () => {
        conn.phase = "idle";
        conn.since = Date.now();
      });
    } catch (e) {
      if (isTooManyFiles(e)) {
        await refuse(conn.socket, 503, "the server has no file descriptors left; retry later");
      }
      // Anything else: the client or the back end went away; nothing to tell.
    } finally {
      close(conn);
    }
  };

  const acceptLoop = (async () => {
    while (!stopping) {
      let socket: Deno.TcpConn;
      try {
        socket = await listener.accept();
      } catch (e) {
        if (stopping || e instanceof Deno.errors.BadResource) return;
        // Out of file descriptors: make room; any other failure is passed over. Never give up.
        if (!(isTooManyFiles(e) && evictOne())) await delay(50);
        continue;
      }
      if (open.size >= maxConnections && !evictOne()) {
        refuse(
          socket,
          503,
          `the server holds its maximum of ${maxConnections} connections (server.maxConnections); retry later`,
        ).finally(() => closeQuietly(socket));
        continue;
      }
      const conn: Connection = {
        socket,
        phase: "headers",
        since: Date.now(),
        tail: [],
        headerBytes: 0,
        closed: false,
      };
      open.add(conn);
      conn.ended = serveConnection(conn);
    }
  })();

  let stopped: Promise<void> | undefined;
  const shutdown = () => {
    stopped ??= (async () => {
      stopping = true;
      try {
        listener.close();
      } catch { /* closed already */ }
      await acceptLoop;
      // Connections reading headers, or idle after a response, have no request to finish; the
      // others end when the back end has answered them.
      const now = Date.now();
      for (const conn of open) {
        if (conn.phase === "headers" || (conn.phase === "idle" && now - conn.since >= 1000)) {
          close(conn);
        }
      }
      await backend.shutdown();
      await backendLoop;
      // Responses still being sent end on their own: the back end closes each connection once
      // its response is complete.
      await Promise.all([...open].map((conn) => conn.ended));
      clearInterval(sweep);
      await Deno.remove(socketDir, { recursive: true }).catch(() => {});
    })();
    return stopped;
  };
  options.signal?.addEventListener("abort", () => shutdown(), { once: true });
  const { promise: finished, resolve } = Promise.withResolvers<void>();
  acceptLoop.then(() => shutdown()).then(resolve);

  return {
    addr: listener.addr,
    connections: () => open.size,
    finished,
    shutdown,
  };

  /**
   * Reads until the first request's headers are complete; returns what was read, or null when
   * the client went away (or was closed: timeout, eviction) first.
   */
  async function readHeaders(conn: Connection): Promise<Uint8Array | null> {
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(16 * 1024);
    while (conn.phase === "headers") {
      const n = await conn.socket.read(buffer);
      if (n === null || conn.closed) return null;
      chunks.push(buffer.slice(0, n));
      fromClient(conn, buffer.subarray(0, n));
      if (conn.closed) return null;
    }
    return concat(chunks);
  }

  /** Follows the client's bytes: a new request begins after a response, its headers end. */
  function fromClient(conn: Connection, bytes: Uint8Array): void {
    if (conn.phase === "idle") {
      conn.phase = "headers";
      conn.since = Date.now();
      conn.tail = [];
      conn.headerBytes = 0;
    }
    if (conn.phase !== "headers") return;
    const end = headerEnd(conn.tail, bytes);
    if (end >= 0) {
      conn.phase = "request";
      return;
    }
    conn.headerBytes += bytes.length;
    conn.tail = [...conn.tail, ...bytes.subarray(Math.max(0, bytes.length - 3))].slice(-3);
    if (conn.headerBytes > MAX_HEADER_BYTES) {
      refuse(conn.socket, 431, `the request's headers exceed ${MAX_HEADER_BYTES} bytes`)
        .finally(() => close(conn));
    }
  }
}

/** The index just past `\r\n\r\n` in `tail` + `bytes`, or -1. */
function headerEnd(tail: readonly number[], bytes: Uint8Array): number {
  let matched = 0;
  // How much of CRLFCRLF the tail already ends with.
  for (let k = Math.min(3, tail.length); k > 0; k--) {
    if (tail.slice(-k).every((b, i) => b === CRLFCRLF[i])) {
      matched = k;
      break;
    }
  }
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === CRLFCRLF[matched]) matched++;
    else matched = b === 13 ? 1 : 0;
    if (matched === 4) return i + 1;
  }
  return -1;
}

/** Copies `from` to `to` until `from` ends, then half-closes `to`. */
async function pump(
  from: Deno.Conn,
  to: Deno.Conn,
  seen: (bytes: Uint8Array) => void,
): Promise<void> {
  let buffer = new Uint8Array(64 * 1024);
  while (true) {
    const n = await from.read(buffer);
    if (n === null) break;
    seen(buffer.subarray(0, n));
    await writeAll(to, buffer.subarray(0, n));
    // A large body fills the buffer on every read: fewer, larger reads and writes for it.
    if (n === buffer.length && n < PUMP_MAX) buffer = new Uint8Array(4 * buffer.length);
  }
  await to.closeWrite().catch(() => {});
}

async function writeAll(to: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await to.write(bytes.subarray(at));
}

/** Answers a connection that will not be served with a JSON error, as the API's errors are. */
async function refuse(socket: Deno.Conn, status: 431 | 503, message: string): Promise<void> {
  const code = status === 503 ? "SERVICE_UNAVAILABLE" : "HEADERS_TOO_LARGE";
  const body = JSON.stringify({ code, message });
  const reason = status === 503 ? "Service Unavailable" : "Request Header Fields Too Large";
  const text = `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=UTF-8\r\n` +
    `Content-Length: ${new TextEncoder().encode(body).length}\r\nConnection: close\r\n` +
    (status === 503 ? "Retry-After: 1\r\n" : "") + `\r\n${body}`;
  try {
    await Promise.race([writeAll(socket, new TextEncoder().encode(text)), delay(1000)]);
  } catch { /* gone */ }
}

/**
 * Connections the soft limit of open files allows: each served one takes three (the client's
 * socket, and both ends of the Unix socket to the back end), and some are kept for results,
 * tables and logs. Unknown limit (not Linux): no bound here; running out is survived anyway.
 *
 * @example Math.min(settings["server.maxConnections"], connectionsAllowedByFds())
 */
export function connectionsAllowedByFds(): number {
  try {
    const limits = Deno.readTextFileSync("/proc/self/limits");
    const soft = /^Max open files\s+(\d+|unlimited)/m.exec(limits)?.[1];
    if (soft === undefined || soft === "unlimited") return Number.MAX_SAFE_INTEGER;
    return Math.max(8, Math.floor((Number(soft) - RESERVED_FDS) / 3));
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed already */ }
}

function isTooManyFiles(e: unknown): boolean {
  // EMFILE (the process's limit) or ENFILE (the system's).
  return e instanceof Error && /too many open files|os error 2[34]\b/i.test(e.message);
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
