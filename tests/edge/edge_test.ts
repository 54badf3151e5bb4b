/**
 * edge.ts under a real `deno serve`, granted file access only to the KV's folder: the bootstrap
 * token, scripts and tables written and read through the API, a synchronous and an asynchronous
 * query, a stored script run, the console, settings from TRAWL_SET_*, and a `main.ts serve` on the
 * same KV that sees what the edge wrote (and the other way round, with ETag conflicts).
 */

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { REPO_ROOT, startServerProcess } from "../foundation/server_process.ts";
import { settingsFromEnv } from "../../edge.ts";
import { TOKEN_PATTERN } from "../../home/tokens.ts";
import { sleep } from "../../engine/util/sleep.ts";

const EDGE = join(REPO_ROOT, "edge.ts");

function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return "trawl_" + bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

interface EdgeProcess extends AsyncDisposable {
  readonly url: string;
  readonly output: () => string;
}

/** `deno serve` of edge.ts with read and write granted on `kvDir` only. */
async function startEdge(kvDir: string, env: Record<string, string>): Promise<EdgeProcess> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "serve",
      "--unstable-no-legacy-abort",
      "--unstable-kv",
      "--allow-net",
      "--allow-env",
      `--allow-read=${kvDir}`,
      `--allow-write=${kvDir}`,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      EDGE,
    ],
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
  }).spawn();
  const chunks: string[] = [];
  const pumps = [child.stdout, child.stderr].map(async (stream) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) chunks.push(text);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await child.status;
      throw new Error(`edge.ts did not start:\n${chunks.join("")}`);
    }
    await sleep(100);
  }
  return {
    url,
    output: () => chunks.join(""),
    async [Symbol.asyncDispose]() {
      // deno serve's graceful stop waits for open (keep-alive) connections: not for long.
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 3000);
      await child.status;
      clearTimeout(timer);
      await Promise.all(pumps);
    },
  };
}

function api(url: string, token: string) {
  return (path: string, init: RequestInit = {}) =>
    fetch(`${url}/API/v1.0${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${token}`, ...init.headers },
    });
}

const SCRIPT = { "Content-Type": "text/vnd.engine.script" };

Deno.test("settings from the environment: TRAWL_SET_<key>, with __ for a dot", () => {
  assert.deepEqual(
    settingsFromEnv({
      TRAWL_SET_query__maxRunning: "3",
      "TRAWL_SET_query.maxQueued": "7",
      TRAWL_SET_: "ignored",
      TRAWL_STORAGE: "kv:/x",
      PATH: "/bin",
    }),
    { "query.maxRunning": "3", "query.maxQueued": "7" },
  );
});

Deno.test("edge.ts under deno serve: the API and console with file access to the KV's folder only", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-edge-" });
  try {
    const kvDir = join(root, "kv");
    await Deno.mkdir(kvDir);
    const kvFile = join(kvDir, "state.kv");
    const token = newToken();
    await using edge = await startEdge(kvDir, {
      TRAWL_STORAGE: `kv:${kvFile}`,
      TRAWL_BOOTSTRAP_TOKEN: token,
      TRAWL_SET_query__maxScriptBytes: "2000",
    });
    const call = api(edge.url, token);

    // The bootstrap token is the admin's; another is refused.
    const me = await call("/whoami");
    assert.equal(me.status, 200, edge.output());
    assert.deepEqual(await me.json(), { name: "admin", groups: [], admin: true, timeZone: "UTC" });
    const wrong = await api(edge.url, newToken())("/whoami");
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();

    // A script written through the resources API, with its ETag.
    const script = "init(n: 2);\nVALUES((a: 1), (a: 2), (a: 3)) | filter(a <= $n)";
    const put = await call("/resources/user/small.sx", { method: "PUT", body: script });
    assert.equal(put.status, 201, await put.clone().text());
    const etag = put.headers.get("ETag")!;
    const got = await call("/resources/user/small.sx");
    assert.equal(await got.text(), script);
    assert.equal(got.headers.get("ETag"), etag);

    // A synchronous query saves a table; the table is read back through /tables.
    const sync = await call("/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT,
      body: "VALUES((host: 'a', n: 1), (host: 'b', n: 2)) | save('/user/hosts.sxt')",
    });
    assert.equal(sync.status, 200, await sync.clone().text());
    assert.deepEqual(await sync.json(), [{ host: "a", n: 1 }, { host: "b", n: 2 }]);
    const table = await call("/tables/user/hosts.sxt");
    assert.equal(table.status, 200);
    assert.deepEqual(await table.json(), [{ host: "a", n: 1 }, { host: "b", n: 2 }]);
    const listing = await call("/resources/user/");
    const names = (await listing.json()).map((e: { name: string; kind: string }) =>
      e.kind + ":" + e.name
    );
    assert.deepEqual(names, ["table:hosts.sxt", "script:small.sx"]);

    // An asynchronous query of the stored script, with an argument, reading the stored table too.
    const submitted = await call("/queries?scriptPath=/user/small.sx&n=1", { method: "POST" });
    assert.equal(submitted.status, 201, await submitted.clone().text());
    const { queryId } = await submitted.json();
    let state = "";
    for (let i = 0; i < 100 && !["SUCCEEDED", "FAILED"].includes(state); i++) {
      const status = await call(`/queries/${queryId}`);
      state = (await status.json()).state;
      if (state !== "SUCCEEDED") await sleep(50);
    }
    assert.equal(state, "SUCCEEDED");
    const result = await call(`/queries/${queryId}/result`);
    assert.deepEqual(await result.json(), [{ a: 1 }]);
    const joined = await call("/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT,
      body: "@[hosts.sxt] | filter(n > 1) | select(host)",
    });
    assert.deepEqual(await joined.json(), [{ host: "b" }]);

    // A log file in the tree (in the KV), read by a query's source.
    const folder = await call("/resources/shared/logs/", { method: "PUT" });
    assert.equal(folder.status, 201);
    const log = await call("/resources/shared/logs/a.log", { method: "PUT", body: "x\ny\nz\n" });
    assert.equal(log.status, 201);
    const parsed = await call("/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT,
      body: "PARSE(pattern: 'LD:line EOL', src: '/shared/logs/*.log') | select(count(*) as n)",
    });
    assert.deepEqual(await parsed.json(), [{ n: 3 }]);

    // A setting from TRAWL_SET_query__maxScriptBytes.
    const big = await call("/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT,
      body: "VALUES((a: 1))" + " ".repeat(3000),
    });
    assert.equal(big.status, 413);
    await big.body?.cancel();

    // The console page.
    const page = await fetch(`${edge.url}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Trawl console<\/title>/);

    // A main.ts server on the same KV sees what the edge wrote, and the other way round.
    const home = join(root, "home");
    await Deno.mkdir(join(home, "conf"), { recursive: true });
    await Deno.writeTextFile(join(home, "conf", "settings.conf"), `storage = kv:${kvFile}\n`);
    await using server = await startServerProcess(home);
    assert.equal(server.firstToken, undefined, "the admin exists already in the KV");
    const other = api(server.url, token);
    const seen = await other("/resources/user/small.sx");
    assert.equal(seen.status, 200);
    assert.equal(await seen.text(), script);
    assert.equal(seen.headers.get("ETag"), etag);
    const tableThere = await other("/tables/user/hosts.sxt");
    assert.deepEqual(await tableThere.json(), [{ host: "a", n: 1 }, { host: "b", n: 2 }]);
    const changed = await other("/resources/user/small.sx", {
      method: "PUT",
      headers: { "If-Match": etag },
      body: "VALUES((a: 9))",
    });
    assert.equal(changed.status, 200);
    await changed.body?.cancel();
    // The edge's write on the old ETag is a conflict, not a lost update.
    const stale = await call("/resources/user/small.sx", {
      method: "PUT",
      headers: { "If-Match": etag },
      body: "VALUES((a: 0))",
    });
    assert.equal(stale.status, 412);
    await stale.body?.cancel();
    const rerun = await call("/?scriptPath=/user/small.sx", { method: "POST" });
    assert.deepEqual(await rerun.json(), [{ a: 9 }]);

    // Nothing but the KV's files went to the edge's folder, and no access was refused.
    for await (const entry of Deno.readDir(kvDir)) {
      assert.match(entry.name, /^state\.kv(-wal|-shm)?$/, entry.name);
    }
    assert.doesNotMatch(edge.output(), /NotCapable|PermissionDenied|Requires (read|write) access/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("edge.ts without TRAWL_STORAGE, or with a malformed bootstrap token, answers 500 NOT_CONFIGURED as JSON saying what to set", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-edge-" });
  try {
    await expectFailedStart(
      root,
      { TRAWL_STORAGE: "" },
      /set TRAWL_STORAGE to 'kv:<path of a KV file>'/,
    );
    const output = await expectFailedStart(
      root,
      { TRAWL_STORAGE: `kv:${join(root, "state.kv")}`, TRAWL_BOOTSTRAP_TOKEN: "hunter2-token" },
      /TRAWL_BOOTSTRAP_TOKEN must be 'trawl_' and 43 characters/,
    );
    assert.doesNotMatch(output, /hunter2/, "the token is not shown");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/** Starts the edge with `env`; its requests answer 500 NOT_CONFIGURED and its answer and log match `said`. */
async function expectFailedStart(
  root: string,
  env: Record<string, string>,
  said: RegExp,
): Promise<string> {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "serve",
      "--unstable-kv",
      "--allow-net",
      "--allow-env",
      `--allow-read=${root}`,
      `--allow-write=${root}`,
      "--port",
      String(port),
      EDGE,
    ],
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
  }).spawn();
  const chunks: string[] = [];
  const pumps = [child.stdout, child.stderr].map(async (stream) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) chunks.push(text);
  });
  try {
    let status = 0;
    let type: string | null = null;
    let body = "";
    for (let i = 0; i < 300 && status === 0; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        status = res.status;
        type = res.headers.get("Content-Type");
        body = await res.text();
      } catch {
        await sleep(100);
      }
    }
    assert.equal(status, 500);
    // The API's error form, saying what to set.
    assert.equal(type, "application/json; charset=UTF-8");
    const error = JSON.parse(body);
    assert.equal(error.code, "NOT_CONFIGURED", body);
    assert.match(error.message, said);
    for (let i = 0; i < 50 && !said.test(chunks.join("")); i++) {
      await sleep(50);
    }
    assert.match(chunks.join(""), said);
    return chunks.join("");
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Promise.all(pumps);
  }
}

Deno.test("the TRAWL_BOOTSTRAP_TOKEN line of docs/deployment.md makes tokens of the server's form", async () => {
  const doc = await Deno.readTextFile(join(REPO_ROOT, "docs", "deployment.md"));
  const line = doc.split("\n").find((l) => l.startsWith("export TRAWL_BOOTSTRAP_TOKEN="));
  assert.ok(line, "docs/deployment.md shows how to make the token");
  const tokens = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const out = await new Deno.Command("bash", {
      args: ["-c", `${line}\necho "$TRAWL_BOOTSTRAP_TOKEN"`],
      stdout: "piped",
    }).output();
    assert.equal(out.code, 0);
    const token = new TextDecoder().decode(out.stdout).trim();
    assert.match(token, TOKEN_PATTERN);
    tokens.add(token);
  }
  assert.equal(tokens.size, 20, "each run makes another token");
});
