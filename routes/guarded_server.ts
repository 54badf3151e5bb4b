/**
 * The HTTP server with its connections bounded. Deno.serve has no limit on connections and no
 * deadline for a client that owes bytes, and an accept that fails for want of file descriptors
 * ends its `finished` (and the process with it). So the TCP port is ours: a front accepts each
 * connection, counts it, reads each request through llhttp (routes/front/http_parser.ts) and
 * hands it to Deno.serve, listening on a private Unix socket, one request at a time; the back
 * end's answer is read through llhttp too, so the front always knows who owes bytes:
 *
 *   phase      who owes          deadline
 *   head       the client        `headersTimeoutMs` from the request's first byte (each request
 *                                its own clock; header bytes counted per request, 64 KiB at most)
 *   body       the client        `bodyTimeoutMs` between two reads of the body (408, closed)
 *   response   the server        none: a query may take minutes, an events stream hours
 *   idle       nobody            `idleTimeoutMs` from the end of the last response
 *   linger     nobody            2 s: answered before its body was read, the rest is discarded
 *
 * The deadlines run on the front's own clock, which leaves out the time the server itself was
 * stalled (its sweep late: its thread blocked, or the process short of CPU): bytes that came
 * meanwhile waited unread in the socket, and the client is not cut for the server's delay.
 *
 * - Each request's head reaches the back end with a `Trawl-Client-Address` header naming the
 *   client's address (routes/front/request_head.ts); a client's own such header is dropped.
 * - What llhttp refuses (duplicate Content-Length, Content-Length with Transfer-Encoding,
 *   obs-fold, bare LF, ...) is answered 400 and closed. A second request sent before the first
 *   is answered (pipelining) waits in the front until the answer has been sent.
 * - HTTP/2 with prior knowledge (`PRI * HTTP/2.0`) is answered the HTTP/2 way (SETTINGS, then
 *   GOAWAY with HTTP_1_1_REQUIRED) and closed.
 * - `maxConnections` (`server.maxConnections`, which main.ts lowers to what the process's file
 *   descriptor limit allows, `connectionsAllowedByFds`): when full, the connection that owes
 *   the server nothing it is serving (head, idle or linger) longest is closed to make room;
 *   without one, the new connection gets a 503 naming the setting.
 * - An accept that fails (EMFILE) never ends the server: it closes an idle connection if there
 *   is one, waits a moment and accepts again.
 *
 *   const server = await serveGuarded(app.fetch, { hostname, port, ...limits, log });
 *   await server.finished;
 */

import { join } from "node:path";
import { sleep } from "../engine/mod.ts";
import type { Logger } from "../home/log.ts";
import { HttpParser, type ParseStep } from "./front/http_parser.ts";
import { CLIENT_ADDRESS_HEADER, forwardedHead } from "./front/request_head.ts";
import { HTTP2_PREFACE_START, HTTP2_REFUSAL, looksLikeHttp2, refusal } from "./front/refusals.ts";

export interface ConnectionLimits {
  readonly maxConnections: number;
  readonly headersTimeoutMs: number;
  /** Longest wait for the next bytes of a request's body (`server.bodyTimeout`). */
  readonly bodyTimeoutMs: number;
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

/** A request's head larger than this is refused (431), as most servers do. */
const MAX_HEADER_BYTES = 64 * 1024;
/** Bytes of later requests held while a response is owed (pipelining); more closes. */
const MAX_HELD_BYTES = 64 * 1024;
/** How long the rest of a body answered early is read and discarded before closing. */
const LINGER_MS = 2000;
/** File descriptors kept for everything but connections: results, tables, logs. */
const RESERVED_FDS = 128;
/** The most a connection's copy reads at once (it starts at 64 KiB). */
const PUMP_MAX = 256 * 1024;

const latin1 = new TextDecoder("latin1");

/** Who owes bytes on a connection; see the table above. */
type Phase = "head" | "body" | "response" | "idle" | "linger";

interface Connection {
  readonly socket: Deno.TcpConn;
  /** The client's address, as the back end is told it. */
  readonly address: string;
  phase: Phase;
  /**
   * When the current phase's clock started (head: the request's first byte; body: the last
   * read), on the front's clock (`clock` in serveGuarded: the server's own stalls left out).
   */
  since: number;
  /** The current request's head so far, and its size. */
  head: Uint8Array[];
  headBytes: number;
  /** Bytes of later requests received while a response is owed. */
  held: Uint8Array[];
  heldBytes: number;
  /** Bytes of the current response have been sent to the client. */
  answering: boolean;
  readonly requests: HttpParser;
  readonly responses: HttpParser;
  backend?: Deno.UnixConn;
  /** Copies the back end's answers to the client; set with the back end. */
  answers?: Promise<void>;
  /** The client's bytes are handled one read at a time, in order. */
  work: Promise<void>;
  closed: boolean;
  /** Settles when the connection has been closed, whatever ended it. */
  ended?: Promise<void>;
}

/** Serves `handler` on hostname:port with the limits above. */
export async function serveGuarded(
  handler: Deno.ServeHandler<Deno.NetAddr>,
  options: GuardedServerOptions,
): Promise<GuardedServer> {
  const { log, maxConnections } = options;
  const socketDir = await Deno.makeTempDir({ prefix: "trawl-http-" });
  const socketPath = join(socketDir, "http.sock");
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const open = new Set<Connection>();
  let stopping = false;
  // The front's clock, for the deadlines: the time by which its sweep came late (its thread
  // blocked, or the process starved of CPU on a loaded machine) is left out. Bytes that arrived
  // meanwhile sat unread in the socket: the server's delay, not the client's, which a sweep on
  // the wall clock counted against the client (a busy run: 158 of 250 connections ended
  // without their answer).
  let stalled = 0;
  const clock = () => performance.now() - stalled;

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
  // Only the front reaches the back end's socket, so the address header is the front's: the
  // handler is told it as the peer, as Deno.serve would tell it the TCP peer.
  const served = (request: Request, info: Deno.ServeHandlerInfo<Deno.UnixAddr>) =>
    handler(request, {
      ...info,
      remoteAddr: {
        transport: "tcp",
        hostname: request.headers.get(CLIENT_ADDRESS_HEADER) ?? "",
        port: 0,
      },
    });
  // The back end: Deno.serve on the private socket, started again should it ever fail.
  let backend = Deno.serve(backendOptions, served);
  const backendLoop = (async () => {
    while (true) {
      try {
        await backend.finished;
      } catch (e) {
        log.error("the HTTP back end stopped; starting it again", e);
      }
      if (stopping) return;
      await sleep(100);
      await Deno.remove(socketPath).catch(() => {});
      if (stopping) return;
      backend = Deno.serve(backendOptions, served);
    }
  })();

  const close = (conn: Connection) => {
    if (conn.closed) return;
    conn.closed = true;
    open.delete(conn);
    closeQuietly(conn.socket);
    if (conn.backend) closeQuietly(conn.backend);
    conn.requests.close();
    conn.responses.close();
  };

  /** Answers the client itself and closes the connection; nothing more is read meanwhile. */
  const refuse = async (conn: Connection, answer: Uint8Array) => {
    conn.phase = "linger";
    conn.since = clock();
    await sendAndClose(conn.socket, answer);
    close(conn);
  };

  /** Closes the connection that owes the server nothing it serves (head, idle, linger) longest. */
  const evictOne = (): boolean => {
    let victim: Connection | undefined;
    for (const conn of open) {
      if (conn.phase === "body" || conn.phase === "response") continue;
      if (!victim || conn.since < victim.since) victim = conn;
    }
    if (victim) close(victim);
    return victim !== undefined;
  };

  /** The deadline of each phase in which the client owes bytes, and of idleness. */
  const overdue = (conn: Connection, now: number): boolean => {
    const waited = now - conn.since;
    switch (conn.phase) {
      case "head":
        return waited > options.headersTimeoutMs;
      case "body":
        return waited > options.bodyTimeoutMs;
      case "idle":
        return waited > options.idleTimeoutMs;
      case "linger":
        return waited > LINGER_MS;
      case "response":
        return false;
    }
  };
  const sweepMs = Math.max(
    50,
    Math.min(
      1000,
      options.headersTimeoutMs / 4,
      options.bodyTimeoutMs / 4,
      options.idleTimeoutMs / 4,
    ),
  );
  let swept = performance.now();
  const sweep = setInterval(
    () => {
      const at = performance.now();
      stalled += Math.max(0, at - swept - sweepMs);
      swept = at;
      const now = clock();
      for (const conn of open) {
        if (!overdue(conn, now)) continue;
        if (conn.phase === "body" && !conn.answering) {
          refuse(
            conn,
            refusal(
              408,
              `the request's body did not come within ${options.bodyTimeoutMs} ms (server.bodyTimeout)`,
            ),
          );
        } else close(conn);
      }
    },
    sweepMs,
  );

  /** Reads the client's bytes until it goes away or the connection is closed. */
  const serveConnection = async (conn: Connection) => {
    try {
      let buffer = new Uint8Array(64 * 1024);
      while (!conn.closed) {
        const n = await conn.socket.read(buffer);
        if (n === null) break;
        // The buffer is read into again only once its bytes have been handled; what is kept
        // longer (a head in parts, a held request) is copied then.
        const bytes = buffer.subarray(0, n);
        conn.work = conn.work.then(() => fromClient(conn, bytes));
        await conn.work;
        // A large body fills the buffer on every read: fewer, larger reads and writes for it.
        if (n === buffer.length && n < PUMP_MAX) buffer = new Uint8Array(4 * buffer.length);
      }
      // The client has stopped sending. One that is owed an answer still gets it (its end is
      // passed on as a half-close); otherwise there is nothing left to do.
      if (!conn.closed && conn.phase === "response" && conn.backend) {
        await conn.backend.closeWrite().catch(() => {});
        await conn.answers;
      }
    } catch (e) {
      if (isTooManyFiles(e)) {
        await refuse(conn, refusal(503, "the server has no file descriptors left; retry later"));
      }
      // Anything else: the client or the back end went away; nothing to tell.
    } finally {
      close(conn);
    }
  };

  /** Follows the client's bytes through llhttp: heads, bodies, ends of requests. */
  const fromClient = async (conn: Connection, bytes: Uint8Array): Promise<void> => {
    let rest = bytes;
    while (!conn.closed) {
      if (conn.phase === "linger") return;
      if (conn.phase === "response") {
        // The next request waits until this one is answered (pipelining).
        if (rest.length === 0) return;
        conn.held.push(rest.slice());
        conn.heldBytes += rest.length;
        if (conn.heldBytes > MAX_HELD_BYTES) close(conn);
        return;
      }
      if (conn.phase === "idle") {
        if (rest.length === 0) return;
        // A new request: its own clock and its own count of header bytes.
        conn.phase = "head";
        conn.since = clock();
        conn.head = [];
        conn.headBytes = 0;
      }
      const step: ParseStep = conn.requests.execute(rest);
      switch (step.kind) {
        case "more":
          if (conn.phase === "head") return headBytes(conn, rest);
          conn.since = clock();
          if (rest.length > 0) await writeAll(conn.backend!, rest);
          return;
        case "head": {
          headBytes(conn, rest.subarray(0, step.at));
          if (conn.phase !== "head") return; // refused
          await sendHead(conn);
          conn.phase = "body";
          conn.since = clock();
          // Even when nothing follows: a request without a body completes on this empty call.
          rest = rest.subarray(step.at);
          continue;
        }
        case "complete":
          if (step.at > 0) await writeAll(conn.backend!, rest.subarray(0, step.at));
          // The back end may have answered (and the answer ended) before the body came whole.
          if (conn.phase === "body") conn.phase = "response";
          rest = rest.subarray(step.at);
          if (rest.length === 0) return;
          continue;
        case "http2":
          return await refuse(conn, HTTP2_REFUSAL);
        case "error":
          if (conn.phase === "head" || !conn.answering) {
            const message = `the request is not valid HTTP/1.1: ${step.reason}`;
            return await refuse(conn, refusal(400, message));
          }
          return close(conn);
      }
    }
  };

  /** Counts a request's head bytes (431 past the limit) and catches an HTTP/2 preface early. */
  const headBytes = (conn: Connection, bytes: Uint8Array) => {
    conn.head.push(bytes.slice());
    conn.headBytes += bytes.length;
    if (conn.headBytes > MAX_HEADER_BYTES) {
      refuse(conn, refusal(431, `the request's headers exceed ${MAX_HEADER_BYTES} bytes`));
      return;
    }
    // Told apart from HTTP/1.1 at its first line, without waiting for the rest of the preface.
    if (conn.headBytes <= 2 * HTTP2_PREFACE_START.length) {
      const start = latin1.decode(concat(conn.head));
      if (start.length >= HTTP2_PREFACE_START.length && looksLikeHttp2(start)) {
        refuse(conn, HTTP2_REFUSAL);
      }
    }
  };

  /** Hands a request's head to the back end (connecting to it on the first request). */
  const sendHead = async (conn: Connection) => {
    const head = forwardedHead(concat(conn.head), conn.address);
    conn.head = [];
    conn.answering = false;
    conn.responses.answersHead = conn.requests.headRequest;
    if (!conn.backend) {
      conn.backend = await Deno.connect({ transport: "unix", path: socketPath });
      if (conn.closed) return closeQuietly(conn.backend);
      conn.answers = copyAnswers(conn, conn.backend);
    }
    await writeAll(conn.backend, head);
  };

  /**
   * Copies the back end's answers to the client, following them through llhttp: the end of
   * an answer makes the connection idle (or lingering, if the body was not read whole), and
   * lets a held request go on. When the back end is done with the connection, so is the client.
   */
  const copyAnswers = async (conn: Connection, from: Deno.UnixConn) => {
    try {
      let buffer = new Uint8Array(64 * 1024);
      while (!conn.closed) {
        const n = await from.read(buffer);
        if (n === null) {
          if (conn.phase === "response" || conn.phase === "body") conn.responses.finish();
          break;
        }
        let rest = buffer.subarray(0, n);
        while (rest.length > 0 && !conn.closed) {
          if (conn.phase !== "response" && conn.phase !== "body") return; // owed nothing: closed
          const step = conn.responses.execute(rest);
          if (step.kind === "more") {
            conn.answering = true;
            await writeAll(conn.socket, rest);
            break;
          }
          if (step.kind !== "complete") return; // the back end's own answer unreadable
          conn.answering = true;
          await writeAll(conn.socket, rest.subarray(0, step.at));
          rest = rest.subarray(step.at);
          if (step.status === 101) return; // no upgrade is served
          if (step.status >= 200) await answered(conn);
        }
        if (n === buffer.length && n < PUMP_MAX) buffer = new Uint8Array(4 * buffer.length);
      }
    } catch {
      /* the client or the back end went away */
    } finally {
      // A lingering connection is closed by its deadline (or the client's end).
      if (conn.phase !== "linger") close(conn);
    }
  };

  /** An answer has been sent whole. */
  const answered = async (conn: Connection) => {
    if (conn.phase === "body") {
      // Answered before its body came (a 413 from Content-Length): read and drop the rest a
      // moment, so that the client reads the answer rather than a reset, then close.
      conn.phase = "linger";
      conn.since = clock();
      await conn.socket.closeWrite().catch(() => {});
      return;
    }
    conn.phase = "idle";
    conn.since = clock();
    if (conn.held.length > 0) {
      const held = concat(conn.held);
      conn.held = [];
      conn.heldBytes = 0;
      conn.work = conn.work.then(() => fromClient(conn, held)).catch(() => close(conn));
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
        if (!(isTooManyFiles(e) && evictOne())) await sleep(50);
        continue;
      }
      if (open.size >= maxConnections && !evictOne()) {
        sendAndClose(
          socket,
          refusal(
            503,
            `the server holds its maximum of ${maxConnections} connections (server.maxConnections); retry later`,
          ),
        ).finally(() => closeQuietly(socket));
        continue;
      }
      const conn: Connection = {
        socket,
        address: socket.remoteAddr.hostname,
        phase: "head",
        since: clock(),
        head: [],
        headBytes: 0,
        held: [],
        heldBytes: 0,
        answering: false,
        requests: new HttpParser("request"),
        responses: new HttpParser("response"),
        work: Promise.resolve(),
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
      // Connections that owe the server nothing it is serving have no request to finish; the
      // others end when the back end has answered them (or their body's deadline passes).
      for (const conn of open) {
        if (conn.phase !== "body" && conn.phase !== "response") close(conn);
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
}

async function writeAll(to: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await to.write(bytes.subarray(at));
}

/** Writes a last answer (giving up after a second: the client may not read) and half-closes. */
async function sendAndClose(socket: Deno.Conn, bytes: Uint8Array): Promise<void> {
  try {
    await Promise.race([writeAll(socket, bytes), sleep(1000)]);
    await socket.closeWrite();
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
