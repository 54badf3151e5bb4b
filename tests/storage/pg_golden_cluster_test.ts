/**
 * Every golden script (tests/scripts/, tests/golden_test.ts) through two real `main.ts serve`
 * processes on one PostgreSQL whose scans are spread however small (`cluster.distributeBytes=1`,
 * `cluster.minShareBytes=1`: each file of lines cut into shares of a few bytes), against one
 * server alone on a database of its own (distribution off): the same status, schema, rows,
 * warnings and errors, script by script, in sequence, the coordinator alternating between the
 * two servers.
 *
 * The golden files are read through a FILE datastore `golden` whose root is one folder both
 * servers see (the golden data and samples, as tests/golden_test.ts lays them out under
 * `/shared/`): each script's `src: '/shared/...'` is read as `src: 'file://golden/...'`. The same
 * files are also put in the resource tree at `/shared/` (in the database), for what the scripts
 * name there otherwise (views, pattern files, the views' own sources). Scripts that scan no file
 * (VALUES, saved tables) or a file not cut by lines (whole JSON documents) still run through the
 * cluster and must answer alike; SPREAD lists those whose scan must have run as shares (the
 * shares table says so, and that each was held by one server or the other, both in all). The
 * rest are scripts whose plan no scan worker splits either (multi-line records, windows, JSON
 * documents, files with a header line, `@path` fields), or that read no file at all.
 *
 * Each script runs three times: through the lone server (asynchronous: state, schema, rows,
 * warnings, error), through one cluster server asynchronously, and through the other with the
 * synchronous API (which streams a spread scan's rendered rows as they are merged).
 */

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { type ServerProcess, startServerProcess } from "../foundation/server_process.ts";
import { api } from "../support/server_api.ts";
import { startPostgres } from "../support/postgres.ts";
import { shareRows } from "../support/pg_cluster.ts";
import { stateHome } from "../support/shared_state.ts";
import { openPgStorage } from "../../home/storage/pg_storage.ts";

const SCRIPTS = join(import.meta.dirname!, "..", "scripts");
const SAMPLES = join(import.meta.dirname!, "..", "samples");
/** As tests/golden_test.ts SAMPLES_MODIFIED (a syslog line's year is inferred from it). */
const SAMPLES_MODIFIED = new Date("2025-01-15T12:00:00Z");

/**
 * The golden scripts whose scan must run as shares spread over the cluster. Others may too (a
 * new golden script is not required to be listed); each one here failing to is a failure.
 */
const SPREAD = [
  "cmd_unnest_spread",
  "fn_regex_replace_distinct",
  "parse_access",
  "parse_addresses",
  "parse_android_year",
  "parse_choice_formats",
  "parse_epoch",
  "parse_ips",
  "parse_java_names",
  "parse_networks",
  "parse_numbers",
  "parse_optional_choice",
  "parse_optional_eol",
  "parse_optional_matcher",
  "parse_optional_middle",
  "parse_pattern_file",
  "parse_raw_line",
  "parse_sub_patterns",
  "parse_syslog5424",
  "parse_syslog_path_year",
  "parse_syslog_year",
  "parse_text",
  "parse_times",
  "parse_unmatched",
  "parse_unmatched_ignore",
  "read_json",
  "read_json_absent_field",
  "read_json_group",
  "real_cloudtrail",
  "real_cloudtrail_len",
  "real_percentile",
  "real_postgresql_zone",
  "real_syslog",
  "script_init_constants",
  "src_raw_field_json",
  "src_view_args",
  "unnest",
];

async function copyTree(from: string, to: string, modified?: Date): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = join(from, entry.name), target = join(to, entry.name);
    if (entry.isDirectory) await copyTree(source, target, modified);
    else {
      await Deno.copyFile(source, target);
      if (modified) await Deno.utime(target, modified, modified);
    }
  }
}

/** Every file under `dir`, as paths relative to it. */
async function filesUnder(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(join(dir, prefix))) {
    const rel = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory) out.push(...await filesUnder(dir, rel));
    else out.push(rel);
  }
  return out.sort();
}

/** One server and its admin token. */
interface Seat {
  readonly server: ServerProcess;
  readonly token: string;
}

/** The FILE datastore `golden` on `folder`, and the same files in the tree under `/shared/`. */
async function seed(seat: Seat, folder: string): Promise<void> {
  const put = await api(seat.server, seat.token, "/datastores/golden", {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      type: "FILE",
      fileStore: { root: folder, acl: { users: { admin: ["read", "list"] }, groups: {} } },
    }),
  });
  assert.equal(put.status, 201, await put.text());
  const folders = new Set<string>();
  for (const rel of await filesUnder(folder)) {
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (folders.has(dir)) continue;
      folders.add(dir);
      const made = await api(seat.server, seat.token, `/resources/shared/${dir}/`, {
        method: "PUT",
      });
      assert.equal(made.status, 201, `${dir}: ${await made.text()}`);
    }
    const file = await api(seat.server, seat.token, `/resources/shared/${rel}`, {
      method: "PUT",
      body: await Deno.readFile(join(folder, rel)),
    });
    assert.equal(file.status, 201, `${rel}: ${await file.text()}`);
  }
}

/** A golden script reading its sources from the FILE datastore instead of the tree. */
function throughDatastore(script: string): string {
  return script.replaceAll(/\bsrc:(\s*)'\/shared\//g, "src:$1'file://golden/");
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** What a query came to: refused (status, error), or its state with schema, rows, warnings. */
async function outcome(seat: Seat, script: string): Promise<Outcome> {
  const res = await api(seat.server, seat.token, "/queries?scriptPath=/user&waitMillis=60000", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: script,
  });
  const body = await res.json();
  if (res.status !== 200) return { status: res.status, error: body };
  const id = body.queryId as string;
  const warnings = (body.warnings ?? []).map((w: { level: string; message: string }) =>
    `${w.level}: ${w.message}`
  );
  let out: Outcome;
  if (body.state !== "SUCCEEDED") {
    // (A failure names its query: not part of what is compared.)
    const error = JSON.stringify(body.error).replaceAll(UUID, "<id>");
    out = { status: 200, state: body.state, error, warnings };
  } else {
    const rows = await (await api(seat.server, seat.token, `/queries/${id}/result`)).json();
    const schema = await (await api(seat.server, seat.token, `/queries/${id}/result/schema`))
      .json();
    out = { status: 200, state: body.state, schema, rows, warnings };
  }
  // Read: freed (a user may hold only so many results).
  await (await api(seat.server, seat.token, `/queries/${id}`, { method: "DELETE" })).body?.cancel();
  return out;
}

/** The rows of the synchronous API (which streams a spread scan's rows as they are merged). */
async function synchronous(seat: Seat, script: string): Promise<Outcome> {
  const res = await api(seat.server, seat.token, "/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: script,
  });
  const body = await res.json();
  if (res.status !== 200) {
    const error = JSON.stringify(body).replaceAll(UUID, "<id>");
    return { status: res.status, error };
  }
  return { status: 200, rows: body };
}

/** What the synchronous API answers for a query whose outcome was `o`. */
function asSynchronous(o: Outcome): Outcome {
  if (o.state === "SUCCEEDED") return { status: 200, rows: o.rows };
  if (o.state === undefined) return { status: o.status, error: JSON.stringify(o.error) };
  // A query that failed while running: 409 QUERY_FAILED naming its error.
  return { status: 409, state: o.state, error: o.error };
}

interface Outcome {
  readonly status: number;
  readonly state?: string;
  readonly schema?: unknown;
  readonly rows?: unknown;
  readonly warnings?: string[];
  readonly error?: unknown;
}

Deno.test("every golden script answers through two servers spreading every scan as through one server alone", async () => {
  await using pg = await startPostgres();
  const root = await Deno.makeTempDir({ prefix: "trawl-pggolden-" });
  const servers: ServerProcess[] = [];
  const url = await pg.newDatabase();
  const db = await openPgStorage(url, { connections: 1 });
  try {
    const folder = join(root, "golden");
    await copyTree(join(SCRIPTS, "data"), folder);
    await copyTree(SAMPLES, join(folder, "samples"), SAMPLES_MODIFIED);
    const common = ["query.workers=1", "server.timeZone=UTC"];
    const spread = [
      ...common,
      "cluster.distributeBytes=1",
      "cluster.minShareBytes=1",
      "cluster.lease=5 s",
    ];
    const start = async (name: string, storage: string, settings: string[]) => {
      const server = await startServerProcess(
        await stateHome(root, name, storage),
        settings.flatMap((s) => ["--set", s]),
      );
      servers.push(server);
      return server;
    };
    const a = await start("a", `pg:${url}`, spread);
    const b = await start("b", `pg:${url}`, spread);
    const solo = await start("solo", `pg:${await pg.newDatabase()}`, common);
    const cluster: Seat[] = [{ server: a, token: a.firstToken! }, {
      server: b,
      token: a.firstToken!,
    }];
    const alone: Seat = { server: solo, token: solo.firstToken! };
    await seed(cluster[0]!, folder);
    await seed(alone, folder);

    const names = [...Deno.readDirSync(SCRIPTS)]
      .filter((e) => e.isFile && e.name.endsWith(".sx"))
      .map((e) => basename(e.name, ".sx"))
      .sort();
    const ranShares: string[] = [];
    const failures: string[] = [];
    let runsBefore = 0;
    for (const [i, name] of names.entries()) {
      const script = throughDatastore(await Deno.readTextFile(join(SCRIPTS, `${name}.sx`)));
      const want = await outcome(alone, script);
      // Asynchronous through one server, synchronous through the other.
      const got = await outcome(cluster[i % 2]!, script);
      const streamed = await synchronous(cluster[(i + 1) % 2]!, script);
      try {
        assert.deepEqual(got, want);
        if (want.state !== "FAILED") assert.deepEqual(streamed, asSynchronous(want));
        else assert.equal(streamed.status, 409, JSON.stringify(streamed));
      } catch (e) {
        const logs = [a, b].map((s) => s.stderr.slice(-20).join("\n")).join("\n---\n");
        failures.push(`${name}: ${(e as Error).message}\n${logs}`);
      }
      const [{ runs }] = await db.sql<[{ runs: number }]>`
        SELECT count(DISTINCT run)::int AS runs FROM trawl_shares`;
      if (runs > runsBefore) ranShares.push(name);
      runsBefore = runs;
    }
    assert.deepEqual(failures, [], failures.join("\n\n"));

    const rows = await shareRows(db);
    // Nothing failed or left behind; the two servers both held shares.
    assert.ok(
      rows.every((r) => ["done", "cancelled", "handback"].includes(r.state)),
      JSON.stringify(rows.filter((r) => !["done", "cancelled", "handback"].includes(r.state))),
    );
    const holders = new Set(rows.filter((r) => r.state === "done").map((r) => r.holder));
    assert.equal(holders.size, 2, `shares held by ${[...holders]}`);
    const missing = SPREAD.filter((name) => !ranShares.includes(name));
    assert.deepEqual(missing, [], `spread: ${JSON.stringify(ranShares)}`);
    assert.ok(ranShares.length >= SPREAD.length, JSON.stringify(ranShares));
  } finally {
    await db.close();
    for (const s of servers) await s.stop("SIGKILL").catch(() => {});
    await Deno.remove(root, { recursive: true });
  }
});
