// deno-lint-ignore-file no-console
/**
 * What the connection front (routes/guarded_server.ts) costs: real servers (`main.ts serve`), each
 * in a copy of the repository, measured in one run, side by side. By hand, never in CI:
 *
 *   deno run --allow-all bench/front_io_bench.ts [--ref <git revision>]... [--rounds 3]
 *
 * - `pump`: this tree with the front of 9f2aec1, a byte pump that read no more than the end of a
 *   request's head: the floor a front that follows HTTP/1.1 is compared with;
 * - `tree`: this working tree as it is;
 * - each `--ref`: the whole repository at that revision (`--ref main`, say, before a change).
 *
 * Each server gets a 256 MiB file downloaded (GET /resources), a 64 MiB upload (PUT /resources)
 * and 2000 small GETs of /healthz on one kept-alive connection, through a client of raw sockets
 * (a fetch client costs more than the front and would hide it). It prints MiB/s and ms per GET
 * for each round, then each figure's best as a ratio to `pump`, with the load average.
 */

import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const PUMP_REVISION = "9f2aec1";
const DOWN_MIB = 256;
const UP_MIB = 64;
const GETS = 2000;

interface Variant {
  readonly name: string;
  readonly dir: string;
}

interface Server {
  readonly url: URL;
  readonly token: string;
  readonly child: Deno.ChildProcess;
}

interface Figures {
  readonly download: number[];
  readonly upload: number[];
  readonly get: number[];
}

async function git(args: string[]): Promise<Uint8Array> {
  const out = await new Deno.Command("git", { args, cwd: root, stderr: "inherit" }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")} failed`);
  return out.stdout;
}

/** Writes the files git lists (`tree`: the working tree's; else the revision's) under `dir`. */
async function copyTree(dir: string, revision?: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const tar = revision === undefined
    ? new Deno.Command("bash", {
      args: ["-c", `git ls-files -z | tar --null -T - -c | tar -x -C "${dir}"`],
      cwd: root,
    })
    : new Deno.Command("bash", {
      args: ["-c", `git archive "$0" | tar -x -C "${dir}"`, revision],
      cwd: root,
    });
  if (!(await tar.output()).success) throw new Error(`copying ${revision ?? "the tree"} failed`);
}

async function variants(scratch: string, refs: string[]): Promise<Variant[]> {
  const pump = join(scratch, "pump");
  await copyTree(pump);
  await Deno.writeFile(
    join(pump, "routes/guarded_server.ts"),
    await git(["show", `${PUMP_REVISION}:routes/guarded_server.ts`]),
  );
  const tree = join(scratch, "tree");
  await copyTree(tree);
  const out = [{ name: "pump", dir: pump }, { name: "tree", dir: tree }];
  for (const [i, ref] of refs.entries()) {
    const dir = join(scratch, `ref${i}`);
    await copyTree(dir, ref);
    out.push({ name: ref, dir });
  }
  return out;
}

/** Starts `main.ts serve` of the copy in `dir`, its home beside it (removed with the scratch). */
async function start(dir: string): Promise<Server> {
  const home = `${dir}-home`;
  await Deno.mkdir(home);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--unstable-no-legacy-abort",
      "--unstable-kv",
      "--allow-all",
      "main.ts",
      "serve",
      "--home",
      home,
      "--set",
      "wgui.port=0",
      "--set",
      "resource.maxBytes=1 GiB",
    ],
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let url = "";
  let token = "";
  while (!url || !token) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the server in ${dir} exited before listening`);
    text += value;
    url ||= /Trawl listening on (http:\/\/\S+?)\/?$/m.exec(text)?.[1] ?? "";
    token ||= /^(trawl_[A-Za-z0-9_-]{43})$/m.exec(text)?.[1] ?? "";
  }
  (async () => {
    while (!(await lines.read()).done);
  })();
  return { url: new URL(url), token, child };
}

/** A kept-alive HTTP/1.1 client on a raw socket: one request at a time, Content-Length answers. */
class RawClient {
  readonly #buffer = new Uint8Array(1 << 20);

  private constructor(readonly conn: Deno.TcpConn) {}

  static async open(url: URL): Promise<RawClient> {
    return new RawClient(await Deno.connect({ hostname: url.hostname, port: Number(url.port) }));
  }

  async send(head: string, body?: Uint8Array): Promise<void> {
    await writeAll(this.conn, new TextEncoder().encode(head));
    if (body) await writeAll(this.conn, body);
  }

  /** Reads one answer whole; returns its status and its body's length. */
  async answer(): Promise<{ status: number; length: number }> {
    let head = new Uint8Array(0);
    let end = -1;
    while ((end = headEnd(head)) < 0) {
      const n = await this.conn.read(this.#buffer);
      if (n === null) throw new Error("the server closed the connection");
      const more = new Uint8Array(head.length + n);
      more.set(head);
      more.set(this.#buffer.subarray(0, n), head.length);
      head = more;
    }
    const text = new TextDecoder().decode(head.subarray(0, end));
    const status = Number(text.slice(9, 12));
    const length = Number(/^content-length: *(\d+)/im.exec(text)?.[1] ?? "0");
    for (let have = head.length - end; have < length;) {
      const n = await this.conn.read(this.#buffer);
      if (n === null) throw new Error("the server closed the connection");
      have += n;
    }
    return { status, length };
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

function headEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13) {
      return i + 1;
    }
  }
  return -1;
}

const mibPerS = (bytes: number, ms: number) => bytes / 1048576 / (ms / 1000);

async function upload(server: Server, name: string, bytes: Uint8Array): Promise<number> {
  const client = await RawClient.open(server.url);
  try {
    const started = performance.now();
    await client.send(
      `PUT /API/v1.0/resources/shared/${name} HTTP/1.1\r\nHost: bench\r\n` +
        `Authorization: Bearer ${server.token}\r\nContent-Length: ${bytes.length}\r\n\r\n`,
      bytes,
    );
    const { status } = await client.answer();
    if (status >= 300) throw new Error(`PUT answered ${status}`);
    return mibPerS(bytes.length, performance.now() - started);
  } finally {
    client.conn.close();
  }
}

async function download(server: Server, name: string): Promise<number> {
  const client = await RawClient.open(server.url);
  try {
    const started = performance.now();
    await client.send(
      `GET /API/v1.0/resources/shared/${name} HTTP/1.1\r\nHost: bench\r\n` +
        `Authorization: Bearer ${server.token}\r\n\r\n`,
    );
    const { status, length } = await client.answer();
    if (status !== 200 || length !== DOWN_MIB * 1048576) {
      throw new Error(`GET answered ${status} with ${length} bytes`);
    }
    return mibPerS(length, performance.now() - started);
  } finally {
    client.conn.close();
  }
}

/** Milliseconds per GET /healthz, one after the other on one connection. */
async function gets(server: Server): Promise<number> {
  const client = await RawClient.open(server.url);
  try {
    const one = async () => {
      await client.send("GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n");
      const { status } = await client.answer();
      if (status !== 200) throw new Error(`/healthz answered ${status}`);
    };
    for (let i = 0; i < 100; i++) await one();
    const started = performance.now();
    for (let i = 0; i < GETS; i++) await one();
    return (performance.now() - started) / GETS;
  } finally {
    client.conn.close();
  }
}

async function main(): Promise<void> {
  const refs = Deno.args.flatMap((a, i) => Deno.args[i - 1] === "--ref" ? [a] : []);
  const roundsAt = Deno.args.indexOf("--rounds");
  const rounds = roundsAt >= 0 ? Number(Deno.args[roundsAt + 1]) : 3;
  const scratch = await Deno.makeTempDir({ prefix: "trawl-front-io-bench-" });
  const servers: { name: string; server: Server }[] = [];
  try {
    for (const variant of await variants(scratch, refs)) {
      servers.push({ name: variant.name, server: await start(variant.dir) });
    }
    const big = new Uint8Array(DOWN_MIB * 1048576).map((_, i) => (i * 7) & 255);
    for (const { server } of servers) await upload(server, "front_io.bin", big);
    const figures = new Map<string, Figures>();
    for (let round = 0; round < rounds; round++) {
      // Rounds alternate the servers, so that a busy moment of the machine falls on each.
      for (const { name, server } of servers) {
        const f = figures.get(name) ?? { download: [], upload: [], get: [] };
        figures.set(name, f);
        f.download.push(await download(server, "front_io.bin"));
        f.upload.push(await upload(server, "front_io_up.bin", big.subarray(0, UP_MIB * 1048576)));
        f.get.push(await gets(server));
      }
    }
    report(figures);
  } finally {
    for (const { server } of servers) {
      server.child.kill("SIGTERM");
      await server.child.status;
    }
    await Deno.remove(scratch, { recursive: true });
  }
}

function report(figures: Map<string, Figures>): void {
  const best = (f: Figures) => ({
    download: Math.max(...f.download),
    upload: Math.max(...f.upload),
    get: Math.min(...f.get),
  });
  const pump = best(figures.get("pump")!);
  console.log(`load average: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  console.log(
    `${"front".padEnd(10)} ${`download ${DOWN_MIB} MiB`.padEnd(26)} ${
      `upload ${UP_MIB} MiB`.padEnd(26)
    } GET /healthz kept alive`,
  );
  const each = (xs: number[], digits: number) => xs.map((x) => x.toFixed(digits)).join("/");
  for (const [name, f] of figures) {
    const b = best(f);
    console.log(
      `${name.padEnd(10)} ${
        `${each(f.download, 0)} MiB/s (${(b.download / pump.download).toFixed(2)}x)`.padEnd(26)
      } ${`${each(f.upload, 0)} MiB/s (${(b.upload / pump.upload).toFixed(2)}x)`.padEnd(26)} ${
        each(f.get, 3)
      } ms (${(b.get / pump.get).toFixed(2)}x)`,
    );
  }
  console.log("(x: the best round against pump's best; for GET, above 1 is slower)");
}

if (import.meta.main) await main();
