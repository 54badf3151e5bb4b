/**
 * HTTP/1.1 over a bare TCP socket, for tests of the front (routes/guarded_server.ts): bytes as a
 * hostile or plain client sends them, and the answers read one at a time.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder("latin1");

export interface RawAnswer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/** A connection to `url`'s host and port, with reads that keep what came after an answer. */
export class RawClient implements Disposable {
  #rest = new Uint8Array(0);
  #closed = false;

  private constructor(readonly conn: Deno.TcpConn) {}

  static async open(url: string): Promise<RawClient> {
    const { hostname, port } = new URL(url);
    return new RawClient(await Deno.connect({ hostname, port: Number(port) }));
  }

  async send(text: string | Uint8Array): Promise<void> {
    const bytes = typeof text === "string" ? encoder.encode(text) : text;
    for (let at = 0; at < bytes.length;) at += await this.conn.write(bytes.subarray(at));
  }

  /**
   * The next answer (Content-Length bodies only; none for `noBody`, an answer to HEAD), or null
   * if the server closed first or `ms` passed.
   */
  async answer(ms = 10_000, options: { noBody?: boolean } = {}): Promise<RawAnswer | null> {
    const deadline = Date.now() + ms;
    while (true) {
      const text = decoder.decode(this.#rest);
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = text.slice(0, end);
        const length = options.noBody
          ? 0
          : Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (text.length >= end + 4 + length) {
          this.#rest = this.#rest.subarray(end + 4 + length);
          return {
            status: Number(head.slice(9, 12)),
            head,
            body: new TextDecoder().decode(
              encoder.encode(text).subarray(end + 4, end + 4 + length),
            ),
          };
        }
      }
      const more = await this.#read(deadline - Date.now());
      if (more === null || more === "timeout") return null;
    }
  }

  /** Everything the server sends until it closes, or "OPEN" if it has not closed within `ms`. */
  async untilClosed(ms = 10_000): Promise<Uint8Array | "OPEN"> {
    const deadline = Date.now() + ms;
    while (true) {
      const left = deadline - Date.now();
      if (left <= 0) return "OPEN";
      const more = await this.#read(left);
      if (more === "timeout") return "OPEN";
      if (more === null) return this.#rest;
    }
  }

  /** A read that outlived its wait, taken up by the next wait. */
  #pending?: Promise<Uint8Array | null> | undefined;

  /** Reads once into the kept bytes; null at the end, "timeout" after `ms`. */
  async #read(ms: number): Promise<number | null | "timeout"> {
    if (this.#closed) return null;
    this.#pending ??= (async () => {
      const buffer = new Uint8Array(64 * 1024);
      const n = await this.conn.read(buffer).catch(() => null);
      return n === null ? null : buffer.subarray(0, n);
    })();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), Math.max(1, ms));
    });
    try {
      const got = await Promise.race([this.#pending, timeout]);
      if (got === "timeout") return got;
      this.#pending = undefined;
      if (got === null) {
        this.#closed = true;
        return null;
      }
      const joined = new Uint8Array(this.#rest.length + got.length);
      joined.set(this.#rest);
      joined.set(got, this.#rest.length);
      this.#rest = joined;
      return got.length;
    } finally {
      clearTimeout(timer);
    }
  }

  [Symbol.dispose](): void {
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}

/** The text of bytes an answer ended with (latin1: every byte shows). */
export function latin1(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
