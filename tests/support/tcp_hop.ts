/**
 * A TCP hop on loopback in front of a real server (PostgreSQL, here): it passes the bytes both
 * ways, and once, where the client first sends a given text, it cuts that connection instead of
 * passing the text on, answering what the test gives first. It can also stop listening at that
 * moment, so that the client's reconnect is refused, as by a database that has just gone away.
 */

export interface HopOptions {
  /** Where to: the server the hop stands in front of. */
  readonly target: { readonly hostname: string; readonly port: number };
  /** The port to listen on (0: any free one). */
  readonly port?: number;
  /** The text (in the client's bytes) at which the first such connection is cut. */
  readonly cutAt?: string;
  /** Sent to the client just before the cut, in place of the server's answer. */
  readonly answer?: Uint8Array;
  /** Stop listening at the cut: the next connections are refused. */
  readonly refuseAfterCut?: boolean;
}

export interface Hop {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Whether the cut was made. */
  readonly cut: boolean;
  /** Stops listening and closes every connection. */
  close(): void;
}

export function startHop(options: HopOptions): Hop {
  let listener: Deno.Listener | null = Deno.listen({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
  });
  const open = new Set<Deno.Conn>();
  let accepted = 0;
  let cut = false;
  const port = (listener.addr as Deno.NetAddr).port;
  const stopListening = () => {
    try {
      listener?.close();
    } catch { /* closed already */ }
    listener = null;
  };
  const closeQuietly = (conn: Deno.Conn) => {
    open.delete(conn);
    try {
      conn.close();
    } catch { /* closed already */ }
  };

  async function pass(client: Deno.Conn): Promise<void> {
    open.add(client);
    let server: Deno.Conn;
    try {
      server = await Deno.connect(options.target);
    } catch {
      closeQuietly(client);
      return;
    }
    open.add(server);
    const back = server.readable.pipeTo(client.writable, { preventClose: true }).catch(() => {});
    const seen = new TextDecoder();
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await client.read(buffer);
        if (n === null) break;
        const chunk = buffer.subarray(0, n);
        if (options.cutAt !== undefined && !cut && seen.decode(chunk).includes(options.cutAt)) {
          cut = true;
          if (options.refuseAfterCut) stopListening();
          if (options.answer) await client.write(options.answer);
          break;
        }
        let written = 0;
        while (written < n) written += await server.write(chunk.subarray(written));
      }
    } catch { /* either side gone: the other is closed below */ }
    closeQuietly(server);
    closeQuietly(client);
    await back;
  }

  (async () => {
    try {
      for await (const client of listener!) {
        accepted++;
        pass(client);
      }
    } catch { /* closed */ }
  })();

  return {
    port,
    get accepted() {
      return accepted;
    },
    get cut() {
      return cut;
    },
    close() {
      stopListening();
      for (const conn of [...open]) closeQuietly(conn);
    },
  };
}

/** PostgreSQL's ErrorResponse message (FATAL, with the code and message given). */
export function pgFatal(code: string, message: string): Uint8Array {
  const fields = `SFATAL\0VFATAL\0C${code}\0M${message}\0\0`;
  const body = new TextEncoder().encode(fields);
  const out = new Uint8Array(1 + 4 + body.length);
  out[0] = "E".charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}
