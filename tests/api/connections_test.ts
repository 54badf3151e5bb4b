/**
 * Connections cannot take the server down: idle ones that never finish their headers, more of
 * them than the process has file descriptors, are closed after `server.headersTimeout`, and
 * meanwhile /healthz and queries are answered. A subprocess under `ulimit -n 256`, as the
 * attack was seen.
 */

import assert from "node:assert/strict";
import { runCli, startServerProcess } from "../foundation/server_process.ts";
import { startTestServer } from "./server.ts";
import { SCRIPT_TYPE, SLOW_SCRIPT, writeBigLog } from "./client.ts";
import { sleep } from "../../engine/util/sleep.ts";

const IDLE = 300;

/** Resolves with how the connection ended: "closed" (EOF or reset) or "open" after `ms`. */
async function endsWithin(conn: Deno.Conn, ms: number): Promise<"closed" | "open"> {
  const buffer = new Uint8Array(1024);
  const timer = new Promise<"open">((r) => setTimeout(() => r("open"), ms));
  const read = (async () => {
    try {
      while ((await conn.read(buffer)) !== null) { /* a 503 or 408 is fine too */ }
    } catch { /* reset */ }
    return "closed" as const;
  })();
  return await Promise.race([read, timer]);
}

Deno.test("300 idle connections under ulimit -n 256 neither stop the server nor block /healthz", async () => {
  const home = await Deno.makeTempDir({ prefix: "trawl-conns-" });
  const idle: Deno.Conn[] = [];
  try {
    const token = (await runCli(["user", "add", "alice", "--home", home])).lastLine;
    await using server = await startServerProcess(home, [
      "--set",
      "server.headersTimeout=2 s",
      "--set",
      "server.idleTimeout=2 s",
    ], { openFiles: 256 });
    const { hostname, port } = new URL(server.url);
    const start = Date.now();
    for (let i = 0; i < IDLE; i++) {
      const conn = await Deno.connect({ hostname, port: Number(port) });
      await conn.write(new TextEncoder().encode("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
      idle.push(conn);
    }
    // Served while the idle connections are held (some of them closed to make room).
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const query = await fetch(`${server.url}/API/v1.0/?scriptPath=/user`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "text/vnd.engine.script" },
      body: "VALUES((a: 1))",
    });
    assert.equal(query.status, 200);
    assert.equal(await query.text(), '[{"a":1}]');
    // Every idle connection is closed once the header timeout has passed.
    const ends = await Promise.all(idle.map((c) => endsWithin(c, 6000)));
    assert.equal(ends.filter((e) => e === "open").length, 0);
    assert.ok(Date.now() - start < 10_000);
    // A fresh connection: the pooled one of the requests above may meet the idle timeout's close
    // just as it is reused (a race every keep-alive client has with any idle timeout).
    using fresh = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    const again = await fetch(`${server.url}/healthz`, { client: fresh });
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.equal(await server.stop(), 0, server.stderr.join("\n"));
    assert.ok(
      !server.stderr.some((l) => /Too many open files|ERROR/.test(l)),
      server.stderr.join("\n"),
    );
  } finally {
    for (const c of idle) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("running out of file descriptors on accept does not end the server; it serves again", async () => {
  const child = new Deno.Command("bash", {
    args: [
      "-c",
      `ulimit -n 64 && exec "$0" run -A "$1"`,
      Deno.execPath(),
      new URL("./guarded_child.ts", import.meta.url).pathname,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const idle: Deno.Conn[] = [];
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let out = "";
    while (!/port \d+/.test(out)) out += (await lines.read()).value ?? "";
    const port = Number(/port (\d+)/.exec(out)![1]);
    // Far more than 64 descriptors' worth, none of them finishing its headers.
    for (let i = 0; i < 150; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(new TextEncoder().encode("GET / HTTP/1.1\r\n"));
      idle.push(conn);
    }
    const res = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await res.text(), "ok");
    const ends = await Promise.all(idle.map((c) => endsWithin(c, 200)));
    assert.ok(ends.filter((e) => e === "closed").length >= 80, "idle ones made room");
    // Still up, still serving.
    const again = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await again.text(), "ok");
  } finally {
    for (const c of idle) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    child.kill("SIGKILL");
    await child.status;
    await lines.cancel();
    await child.stderr.cancel();
  }
});

Deno.test("a client that goes away still cancels its synchronous query through the guard", async () => {
  await using s = await startTestServer();
  await writeBigLog(s);
  const gone = new AbortController();
  const answer = s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: SLOW_SCRIPT,
    signal: gone.signal,
  });
  const supervisor = s.deps.supervisor!;
  const states = () =>
    [...supervisor.getSnapshot().context.queries.values()].map((e) =>
      JSON.stringify(e.ref.getSnapshot().value)
    );
  for (const until = Date.now() + 5000; !states().some((v) => v.includes("RUNNING"));) {
    assert.ok(Date.now() < until, `never RUNNING: ${states()}`);
    await sleep(10);
  }
  gone.abort();
  await assert.rejects(answer);
  // Cancelled, then freed: nothing is held.
  for (const until = Date.now() + 5000; supervisor.getSnapshot().context.queries.size > 0;) {
    assert.ok(Date.now() < until, `still held: ${states()}`);
    await sleep(10);
  }
});
