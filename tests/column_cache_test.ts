/**
 * The column cache over real files (engine/exec/cached_scan.ts, engine/fs/column_cache.ts):
 * the answer is the one without the cache whatever happens to the file between two queries or
 * during one, to the cache's files, or to the disk it is on.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { engineHome } from "./support/engine_home.ts";
import { compile, execute, explain } from "../engine/engine.ts";
import type { QueryContext } from "../engine/contracts/query_context.ts";
import type { ColumnCacheConfig } from "../engine/contracts/column_cache.ts";
import type { Warning } from "../engine/contracts/datastore.ts";
import { newQueryStats, type QueryStats } from "../engine/plan/context.ts";
import { toJsonValue } from "../engine/render/render.ts";
import { ColumnCache, STALE_CACHE_TEMP_MS } from "../engine/fs/column_cache.ts";
import { headerSpan } from "../engine/fs/column_block.ts";
import { createScanWorkers } from "../actors/scan_workers.ts";
import { buildDeps, storagePlace } from "../main.ts";
import { ensureHome, homeLayout } from "../home/layout.ts";
import { loadSettings } from "../home/settings.ts";
import { createLogger } from "../home/log.ts";
import { openKvStorage } from "../home/storage/kv_storage.ts";

type Home = Awaited<ReturnType<typeof engineHome>>;

const PATTERN =
  `'''TIMESTAMP('yyyy-MM-dd HH:mm:ss'):ts ' ' LD:method ' ' LD:path ' ' INT:bytes EOL'''`;
const BASE = Date.UTC(2024, 0, 1);

/** `n` lines from line `from` on, one a minute. */
function lines(from: number, n: number): string {
  let out = "";
  for (let i = from; i < from + n; i++) {
    const t = new Date(BASE + i * 60_000).toISOString().replace("T", " ").slice(0, 19);
    out += `${t} ${["GET", "POST", "PUT"][i % 3]} /p/${i % 17} ${(i * 37) % 5000}\n`;
  }
  return out;
}

interface Ran {
  readonly rows: string;
  readonly warnings: string[];
  readonly stats: QueryStats;
}

async function run(
  home: Home,
  text: string,
  overrides: Partial<QueryContext> = {},
  during?: () => Promise<void>,
): Promise<Ran> {
  const compiled = await compile({ text }, home.context(overrides));
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  const stats = newQueryStats();
  const warnings: Warning[] = [];
  const q = execute(compiled.plan, {
    signal: new AbortController().signal,
    onWarning: (w) => warnings.push(w),
    stats,
  });
  const rows: unknown[] = [];
  let first = true;
  for await (const batch of q.batches) {
    if (first && during) await during();
    first = false;
    for (const r of batch) rows.push(toJsonValue(r, { timeZone: "UTC" }));
  }
  return {
    rows: JSON.stringify(rows),
    warnings: warnings.map((w) => `${w.level}: ${w.message}`),
    stats,
  };
}

const ALL = `PARSE(src: '/shared/a.log', pattern: ${PATTERN})`;
const SUM =
  `${ALL} | select(count(*) as n, sum(bytes) as total, min(ts) as first, max(ts) as last)`;

async function setup(blockBytes = 4096, extra: Partial<ColumnCacheConfig> = {}) {
  const home = await engineHome();
  await home.write("/shared/a.log", lines(0, 1000));
  const columnCache: ColumnCacheConfig = {
    dir: join(home.dir, "cache"),
    maxBytes: 1 << 30,
    blockBytes,
    ...extra,
  };
  const real = home.tree.resolve(home.user, "/shared/a.log").real;
  return { home, columnCache, real };
}

/** The answer with the cache equals the answer without it. */
async function same(home: Home, text: string, columnCache: ColumnCacheConfig): Promise<Ran> {
  const plain = await run(home, text);
  const cached = await run(home, text, { columnCache });
  assert.equal(cached.rows, plain.rows);
  assert.deepEqual(cached.warnings, plain.warnings);
  return cached;
}

Deno.test("a repeated query reads its rows from the cache, not the file", async () => {
  const { home, columnCache } = await setup();
  await using _ = home;
  const cold = await same(home, SUM, columnCache);
  assert.equal(cold.stats.cacheBlocks, 0);
  assert.ok(cold.stats.bytesRead > 0);
  const warm = await same(home, SUM, columnCache);
  assert.ok(warm.stats.cacheBlocks >= 8, `${warm.stats.cacheBlocks} blocks from the cache`);
  assert.equal(warm.stats.bytesRead, 0);
  assert.equal(warm.stats.cacheBytes, cold.stats.bytesRead);
  assert.equal(warm.stats.recordsRead, cold.stats.recordsRead);
  // Another selection of fields is another entry; a filter is applied to the cached rows.
  await same(home, `${ALL} | filter(method = 'GET') | select(path, bytes)`, columnCache);
  await same(home, `${ALL} | filter(method = 'GET') | select(path, bytes)`, columnCache);
});

Deno.test("zone maps skip the blocks a filter on time or a number rules out", async () => {
  const { home, columnCache } = await setup();
  await using _ = home;
  const hour = `${ALL} | filter(ts >= T('2024-01-01 05:00:00') and ts < T('2024-01-01 06:00:00'))` +
    ` | select(count(*) as n, sum(bytes) as b)`;
  const first = await same(home, hour, columnCache); // fills the entry of ts and bytes
  assert.equal(first.stats.cacheBlocksSkipped, 0);
  const warm = await same(home, hour, columnCache);
  assert.ok(warm.stats.cacheBlocksSkipped >= 6, `${warm.stats.cacheBlocksSkipped} skipped`);
  assert.ok(warm.stats.cacheBlocks > warm.stats.cacheBlocksSkipped);
  // A bound on a number, flipped; and an `or` of two hours.
  const numbers = `${ALL} | filter(4990 < bytes) | select(count(*) as n)`;
  await same(home, numbers, columnCache);
  await same(home, numbers, columnCache);
  const either =
    `${ALL} | filter(ts < T('2024-01-01 01:00:00') or ts >= T('2024-01-01 16:00:00'))` +
    ` | select(count(*) as n)`;
  await same(home, either, columnCache);
  const e2 = await same(home, either, columnCache);
  assert.ok(e2.stats.cacheBlocksSkipped > 0);
  // A negated filter prunes nothing and still answers the same.
  const negated = `${ALL} | filter(not (ts >= T('2024-01-01 05:00:00'))) | select(count(*) as n)`;
  await same(home, negated, columnCache);
  const n2 = await same(home, negated, columnCache);
  assert.equal(n2.stats.cacheBlocksSkipped, 0);
  // explain() names the cache and the fields whose zone maps are read.
  const compiled = await compile({ text: hour }, home.context({ columnCache }));
  assert.ok(compiled.ok);
  assert.match(explain(compiled.plan), /via column cache zone maps\(ts\)/);
});

Deno.test("a block the zone maps rule out is skipped by its header: the rest of its file is never read", async () => {
  const { home, columnCache } = await setup();
  await using _ = home;
  const hour = `${ALL} | filter(ts >= T('2024-01-01 05:00:00') and ts < T('2024-01-01 06:00:00'))` +
    ` | select(count(*) as n, sum(bytes) as b)`;
  await same(home, hour, columnCache);
  // Every block's body (all after its header) made unreadable: bytes flipped, its checksum
  // wrong. Only a reader of the whole file could tell.
  const [entry] = [...Deno.readDirSync(columnCache.dir)];
  const dir = join(columnCache.dir, entry!.name);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".blk"));
  assert.ok(names.length >= 8, `${names.length} blocks`);
  for (const name of names) {
    const bytes = await Deno.readFile(join(dir, name));
    const span = headerSpan(bytes);
    for (let i = span; i < bytes.length; i++) bytes[i] = bytes[i]! ^ 0xa5;
    await Deno.writeFile(join(dir, name), bytes);
  }
  const plain = await run(home, hour);
  const r = await run(home, hour, { columnCache });
  assert.equal(r.rows, plain.rows);
  // The blocks of the hour are read whole: found corrupt, removed and read raw (a warning
  // each); every other block is skipped by its header alone, and kept.
  const skipped = r.stats.cacheBlocksSkipped;
  assert.ok(skipped >= 6, `${skipped} skipped`);
  assert.equal(r.warnings.length, names.length - skipped);
  for (const w of r.warnings) assert.match(w, /^INFO: .* was corrupt \(checksum mismatch\)/);
  const left = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".blk"));
  assert.equal(left.length, names.length, "the corrupt ones written again, the skipped kept");
  // A header whose own bytes are wrong is not trusted: removed and read raw, the answer right.
  const one = join(dir, left[0]!);
  const bytes = await Deno.readFile(one);
  bytes[20] = bytes[20]! ^ 0x01;
  await Deno.writeFile(one, bytes);
  const again = await run(home, hour, { columnCache });
  assert.equal(again.rows, plain.rows);
  assert.ok(again.warnings.some((w) => /header checksum mismatch/.test(w)), again.warnings.join());
});

/** Three scan workers over `home`'s tree, each share as small as a test's file needs. */
function threeWorkers(home: Home) {
  return createScanWorkers({
    count: 3,
    dataDir: home.tree.root,
    grants: () => [],
    minShareBytes: 1,
  });
}

/**
 * Each of `scripts` (a grouping over one source) filled into an empty cache: cold and warm, the
 * answer is the one without the cache, and so are the rows of the entry read without a grouping
 * (`rows`); then filled on 3 workers (other cuts) and read back in this thread and on workers.
 * `warm` checks the stats of the reads from a filled entry, `cold` the first read, and `more`
 * runs with the entry filled.
 */
async function fillsAlike(
  home: Home,
  columnCache: ColumnCacheConfig,
  scripts: readonly string[],
  rows: string,
  check: {
    readonly cold?: (ran: Ran) => void;
    readonly warm: (stats: QueryStats) => void;
    readonly more?: (script: string) => Promise<void>;
  },
): Promise<void> {
  const workers = threeWorkers(home);
  try {
    for (const script of scripts) {
      const cold = await same(home, script, columnCache);
      assert.ok(cold.stats.bytesRead > 0);
      check.cold?.(cold);
      check.warm((await same(home, script, columnCache)).stats);
      await check.more?.(script);
      await same(home, rows, columnCache);
      await Deno.remove(columnCache.dir, { recursive: true });
      const filled = await run(home, script, { columnCache, scanWorkers: workers });
      assert.equal(filled.rows, cold.rows);
      assert.equal((await run(home, script, { columnCache })).rows, cold.rows);
      const again = await run(home, script, { columnCache, scanWorkers: workers });
      assert.equal(again.rows, cold.rows);
      check.warm(again.stats);
      await Deno.remove(columnCache.dir, { recursive: true });
    }
  } finally {
    workers.close();
  }
}

Deno.test("a fill under a grouping puts PARSE's records into columns: IPv6 and absent values, lines the scanner leaves, as without the cache", async () => {
  const { home, columnCache, real } = await setup(2048);
  await using _ = home;
  const log = real.replace(/a\.log$/, "ips.log");
  let text = "";
  for (let i = 0; i < 600; i++) {
    // IPv4 mostly; an IPv6 address (left to the expression) or none ('-') now and then.
    const ip = i % 97 === 5 ? `2001:db8::${i % 7}` : i % 53 === 3 ? "-" : `10.0.${i % 3}.${i % 11}`;
    // Now and then an INT beyond 32 bits (null), a LONG of more than 15 digits (its field's
    // values then a list, not a vector), a -0.
    const status = i % 71 === 9 ? 3000000000 : [200, 404, 200, 500][i % 4];
    const bytes = i % 41 === 0
      ? "-"
      : i % 83 === 11
      ? "12345678901234567890"
      : i % 79 === 13
      ? "-0"
      : String((i * 37) % 9000);
    // An HTTP date a minute apart (a timestamp's vector in the fill).
    const d = new Date(Date.UTC(2024, 4, 1) + i * 60_000);
    const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"];
    const two = (x: number) => String(x).padStart(2, "0");
    const time = `${two(d.getUTCDate())}/${months[d.getUTCMonth()]}/2024:${two(d.getUTCHours())}:${
      two(d.getUTCMinutes())
    }:00 +0000`;
    text += `${ip} ${status} ${bytes} /p/${i % 13} [${time}]\n`;
    // A line the pattern does not match (a warning that names it, cold and warm).
    if (i === 250) text += "not a record\n";
  }
  // The last line without its "\n": its block is folded from its columns but never cached.
  const whole = text + "10.0.9.9 200 77 /p/last [01/May/2024:23:00:00 +0000]";
  await Deno.writeTextFile(log, whole);
  // Where the last block's first line starts (blocks of 2 048 bytes own the lines starting in them).
  const lastBlock = whole.indexOf("\n", Math.floor(whole.length / 2048) * 2048 - 1) + 1;
  const src =
    `PARSE(src: '/shared/ips.log', pattern: '''IPADDR:client? ' ' INT:status ' ' LONG:bytes? ' ' NSPACE:path ' [' HTTPDATE:time ']' ''')`;
  const scripts = [
    `${src} | filter(status = 200) | select(client, count(*) as n, sum(bytes) as b) | group(client) | sort(client)`,
    `${src} | select(status, count(*) as n, sum(bytes) as b, count(client) as c) | group(status) | sort(status)`,
    `${src} | select(client, count(*) as n) | group(client) | sort(n desc, client) | limit(5)`,
    // A filter the columns cannot test exactly (a function of a field): the rows are made for it.
    `${src} | filter(len(path) = 4 and status = 200) | select(path, count(*) as n, sum(bytes) as b) | group(path) | sort(path)`,
    `${src} | filter(time >= T('2024-05-01 03:00:00') and time < T('2024-05-01 07:00:00')) | select(status, count(*) as n) | group(status) | sort(status)`,
  ];
  await fillsAlike(home, columnCache, scripts, `${src} | select(client, status, bytes)`, {
    warm: (stats) => {
      // Only the last block is read again (its line has no "\n"): the block with the line the
      // pattern does not match is cached, though the warning looked at its lines again.
      assert.equal(stats.bytesRead, whole.length - lastBlock);
      assert.ok(stats.cacheBlocks >= 4, `${stats.cacheBlocks} blocks`);
    },
    more: async (script) => {
      // Another filter over the same entry (the same fields): the fill kept every record, not
      // only those its own filter passed.
      if (!script.includes("status = 200")) return;
      const other = await same(home, script.replace("status = 200", "status = 500"), columnCache);
      assert.equal(other.stats.bytesRead, whole.length - lastBlock);
    },
  });
});

Deno.test("a fill under a grouping puts READ_JSON's records into columns: a field of numbers turning to text, nested members, skipped lines, as without the cache", async () => {
  const { home, columnCache, real } = await setup(2048);
  await using _ = home;
  const file = real.replace(/a\.log$/, "e.jsonl");
  let text = "";
  for (let i = 0; i < 700; i++) {
    // Numbers mostly; in one block a status written as text from its middle on (its vector
    // spills into a list), now and then null or missing.
    const status = i >= 330 && i < 345
      ? `"${200 + (i % 2)}"`
      : i % 43 === 7
      ? "null"
      : [200, 404, 200, 500][i % 4];
    const fields = [
      ...(i % 37 === 4 ? [] : [`"status":${status}`]),
      // Numbers a vector holds as they are: -0, large, fractions, beyond 2^53 (not summed: the
      // sum of shares would depend on their order).
      `"bytes":${
        i % 59 === 1
          ? "-0"
          : i % 61 === 2
          ? "12345678901234567890"
          : i % 29 === 3
          ? "0.5"
          : (i * 37) % 9000
      }`,
      `"user":${i % 31 === 0 ? '"\\u00e9l\\"a\\\\"' : `"u${i % 7}"`}`,
      `"ok":${i % 3 === 0}`,
      `"geo":{"country":"${["FR", "DE", "US"][i % 3]}","city":"c${i % 5}"}`,
      `"tags":[${i % 4},"t${i % 2}"]`,
    ];
    text += `{${fields.join(",")}}${i % 50 === 8 ? "\r" : ""}\n`;
    // Lines that are not objects (skipped, named by their line cold and warm), blank lines.
    if (i === 250) text += "not json\n";
    if (i === 400) text += "[1,2]\n\n";
  }
  // The last line without its "\n": its block is folded from its columns but never cached.
  const whole = text + `{"status":200,"bytes":1,"user":"last","ok":true,"geo":{"country":"FR"}}`;
  await Deno.writeTextFile(file, whole);
  const src = `READ_JSON(src: '/shared/e.jsonl')`;
  const scripts = [
    `${src} | select(status, count(*) as n, max(bytes) as b, min(bytes) as lo) | group(status) | sort(status)`,
    `${src} | filter(status = 200) | select(user, count(*) as n, max(bytes) as b) | group(user) | sort(user)`,
    // A flat field of arrays (a list from its first record on), one of booleans.
    `${src} | select(ok, count(*) as n, count(status) as s, count(tags) as t, max(len(tags)) as l) | group(ok) | sort(ok)`,
    // Members of a nested object (the path reader gives tuples of them: rows into the columns).
    `${src} | select(geo.country as c, count(*) as n, max(bytes) as b) | group(c) | sort(c)`,
    `${src} | filter(bytes > 4000) | select(tags[0] as t, count(*) as n) | group(t) | sort(t)`,
  ];
  await fillsAlike(home, columnCache, scripts, `${src} | select(status, bytes, user)`, {
    cold: (ran) => {
      assert.ok(ran.warnings.some((w) => w.includes("line 252")), ran.warnings.join("; "));
    },
    warm: (stats) => {
      assert.ok(stats.cacheBlocks >= 10, `${stats.cacheBlocks} blocks`);
      assert.ok(stats.bytesRead < 2048, `${stats.bytesRead} bytes read raw`);
    },
  });
});

Deno.test("a grown file keeps its cached prefix and reads only the new lines", async () => {
  const { home, columnCache, real } = await setup();
  await using _ = home;
  const cold = await same(home, SUM, columnCache);
  await Deno.writeTextFile(real, lines(1000, 100), { append: true });
  const grown = await same(home, SUM, columnCache);
  assert.ok(grown.stats.cacheBlocks > 0);
  assert.ok(grown.stats.bytesRead < cold.stats.bytesRead / 4, `${grown.stats.bytesRead} raw`);
  const again = await same(home, SUM, columnCache);
  assert.equal(again.stats.bytesRead, 0);
});

Deno.test("a file truncated, rewritten or replaced between two queries is read again", async () => {
  const { home, columnCache, real } = await setup();
  await using _ = home;
  await same(home, SUM, columnCache);
  // Truncated (same inode, smaller).
  await Deno.truncate(real, 20_000);
  await same(home, SUM, columnCache);
  await same(home, SUM, columnCache);
  // Rewritten in place at the same size, other content (a later time).
  const text = await Deno.readTextFile(real);
  await Deno.writeTextFile(real, text.replaceAll("GET", "DEL"));
  await Deno.utime(real, new Date(), new Date(Date.now() + 5000));
  await same(home, `${ALL} | filter(method = 'DEL') | select(count(*) as n)`, columnCache);
  const r = await same(home, SUM, columnCache);
  assert.ok(r.stats.bytesRead > 0);
  // Rewritten larger, same inode, its start changed: the sampled bytes differ.
  await Deno.writeTextFile(real, lines(500, 900));
  const g = await same(home, SUM, columnCache);
  assert.ok(g.stats.bytesRead > 20_000);
  // Replaced by another file (another inode) of the same size and time.
  const info = await Deno.stat(real);
  const other = real + ".new";
  await Deno.writeTextFile(other, (await Deno.readTextFile(real)).replaceAll("PUT", "PAT"));
  await Deno.utime(other, info.atime!, info.mtime!);
  await Deno.rename(other, real);
  await same(home, `${ALL} | filter(method = 'PAT') | select(count(*) as n)`, columnCache);
  await same(home, SUM, columnCache);
});

Deno.test("a file that changes during a query leaves no wrong block for the next", async () => {
  for (const change of ["grow", "truncate", "rewrite"] as const) {
    const { home, columnCache, real } = await setup(2048);
    await using _ = home;
    const text = `${ALL} | select(ts, method, bytes)`;
    await run(home, text, { columnCache }, async () => {
      if (change === "grow") await Deno.writeTextFile(real, lines(1000, 50), { append: true });
      else if (change === "truncate") await Deno.truncate(real, 30_000);
      else {
        const t = await Deno.readTextFile(real);
        await Deno.writeTextFile(real, t.replaceAll("POST", "PASS"));
        await Deno.utime(real, new Date(), new Date(Date.now() + 5000));
      }
    });
    await same(home, text, columnCache);
    await same(home, text, columnCache);
  }
});

Deno.test("a block left half-written by a crash is never read, and the sweep removes it", async () => {
  let now = Date.now();
  const { home, columnCache } = await setup();
  await using _ = home;
  await same(home, SUM, columnCache);
  const [entry] = [...Deno.readDirSync(columnCache.dir)];
  const dir = join(columnCache.dir, entry!.name);
  // A writer died after writing half a block under its temporary name.
  const [block] = [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".blk"));
  const bytes = await Deno.readFile(join(dir, block!.name));
  const temp = join(dir, `.tmp-0-4096-deadbeef0000`);
  await Deno.writeFile(temp, bytes.subarray(0, bytes.length >> 1));
  const warm = await same(home, SUM, columnCache);
  assert.equal(warm.stats.bytesRead, 0);
  const cache = new ColumnCache(columnCache, { now: () => now });
  await cache.sweep();
  assert.ok((await Deno.stat(temp)).isFile, "a fresh temporary file may be a live writer's");
  now += STALE_CACHE_TEMP_MS + 1000;
  await cache.sweep();
  await assert.rejects(Deno.stat(temp), Deno.errors.NotFound);
});

Deno.test("a full disk turns the cache off for that write and the query still answers", async () => {
  let tries = 0;
  const { home, columnCache } = await setup(4096, {
    writeFile: (path) => {
      tries++;
      const e = new Error(`No space left on device (os error 28): writing '${path}'`);
      (e as { code?: string }).code = "ENOSPC";
      return Promise.reject(e);
    },
  });
  await using _ = home;
  const r = await same(home, SUM, columnCache);
  assert.ok(tries > 0);
  assert.equal(r.stats.cacheBlocks, 0);
  assert.equal(await new ColumnCache(columnCache).size(), 0);
  const leftovers = [...Deno.readDirSync(columnCache.dir)].flatMap((
    e,
  ) => [...Deno.readDirSync(join(columnCache.dir, e.name))]);
  assert.deepEqual(leftovers, []);
});

Deno.test("a corrupt block is found by its checksum, removed and read raw", async () => {
  const { home, columnCache } = await setup();
  await using _ = home;
  await same(home, SUM, columnCache);
  const [entry] = [...Deno.readDirSync(columnCache.dir)];
  const dir = join(columnCache.dir, entry!.name);
  const path = join(dir, "4096-8192.blk");
  const bytes = await Deno.readFile(path);
  bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0x55;
  await Deno.writeFile(path, bytes);
  const plain = await run(home, SUM);
  const r = await run(home, SUM, { columnCache });
  assert.equal(r.rows, plain.rows);
  assert.equal(r.warnings.length, 1);
  assert.match(
    r.warnings[0]!,
    /^INFO: the column cache's block of '\/shared\/a\.log' at 4096 was corrupt \(checksum mismatch\)/,
  );
  assert.ok(r.stats.bytesRead > 0 && r.stats.bytesRead < 10_000);
  // Written again from the bytes: the next query reads it whole from the cache.
  const again = await same(home, SUM, columnCache);
  assert.equal(again.stats.bytesRead, 0);
});

Deno.test("two queries filling one entry at once leave it whole", async () => {
  const { home, columnCache } = await setup(1024);
  await using _ = home;
  const plain = await run(home, SUM);
  const both = await Promise.all([
    run(home, SUM, { columnCache }),
    run(home, SUM, { columnCache }),
    run(home, SUM, { columnCache }),
  ]);
  for (const r of both) assert.equal(r.rows, plain.rows);
  const warm = await run(home, SUM, { columnCache });
  assert.equal(warm.rows, plain.rows);
  assert.equal(warm.stats.bytesRead, 0);
});

Deno.test("the cache lets no one read a file the rights refuse", async () => {
  const { home, columnCache } = await setup();
  await using _ = home;
  await home.write("/users/alice/mine.log", lines(0, 300));
  const mine = `PARSE(src: '/users/alice/mine.log', pattern: ${PATTERN}) | select(count(*) as n)`;
  await run(home, mine, { columnCache });
  const warm = await run(home, mine, { columnCache });
  assert.equal(warm.stats.bytesRead, 0);
  const bob = { name: "bob", groups: [], admin: false };
  const asBob = { user: bob, workDir: "/users/bob" };
  // Bob's listing refuses the file as it did before there was a cache: no row comes from it.
  const plain = await run(home, mine, asBob);
  const cached = await run(home, mine, { ...asBob, columnCache });
  assert.equal(cached.rows, '[{"n":0}]');
  assert.equal(cached.rows, plain.rows);
  assert.deepEqual(cached.warnings, plain.warnings);
  assert.match(cached.warnings[0]!, /'\/users\/alice\/mine\.log' does not exist or cannot be read/);
  assert.equal(cached.stats.cacheBlocks, 0);
  assert.equal(cached.stats.cacheBytes, 0);
});

Deno.test("the cache keeps under maxBytes, removing the entries used least recently", async () => {
  const { home, columnCache } = await setup(4096, { maxBytes: 1 });
  await using _ = home;
  await same(home, SUM, columnCache);
  const cache = new ColumnCache(columnCache);
  await cache.sweep();
  assert.equal(await cache.size(), 0);
});

Deno.test("shares of workers read and fill the cache alike (1 and 3 workers)", async () => {
  const { home, columnCache, real } = await setup(2048);
  await using _ = home;
  await Deno.writeTextFile(real, lines(1000, 3000), { append: true });
  const workers = threeWorkers(home);
  try {
    const one = await run(home, SUM);
    const texts = [SUM, `${ALL} | filter(bytes > 4000) | select(ts, path)`];
    for (const text of texts) {
      const plain = await run(home, text);
      for (let i = 0; i < 2; i++) {
        const r = await run(home, text, { columnCache, scanWorkers: workers });
        assert.equal(r.rows, plain.rows);
        assert.deepEqual(r.warnings, plain.warnings);
      }
      const warm = await run(home, text, { columnCache, scanWorkers: workers });
      assert.equal(warm.rows, plain.rows);
      assert.ok(warm.stats.cacheBlocks > 0);
      assert.ok(warm.stats.bytesRead < 20_000, `${warm.stats.bytesRead} raw bytes`);
      const here = await run(home, text, { columnCache });
      assert.equal(here.rows, plain.rows);
    }
    assert.ok(one.rows.length > 0);
  } finally {
    workers.close();
  }
});

Deno.test("the server has a cache on its own disk only: not the edge's storage, not when off", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-cache-deps-" });
  const log = createLogger(() => {});
  const stopAll = (deps: ReturnType<typeof buildDeps>) => {
    deps.supervisor?.stop();
    deps.lifetimes.pacer.stop();
    deps.scanWorkers?.close();
  };
  try {
    const home = await ensureHome(join(root, "home"));
    const base = {
      "server.timeZone": "UTC",
      "query.warmWorkers": "false",
      "cache.enabled": "true",
    };
    const on = buildDeps(home, loadSettings(null, base).settings, log);
    stopAll(on);
    assert.equal(on.columnCache?.dir, join(home.dir, "engine_data", "cache"));
    assert.ok(on.columnCache!.maxBytes > 0);
    const sized = buildDeps(
      home,
      loadSettings(null, { ...base, "cache.maxBytes": "2 MiB" }).settings,
      log,
    );
    stopAll(sized);
    assert.equal(sized.columnCache?.maxBytes, 2 * 1024 * 1024);
    const off = buildDeps(
      home,
      loadSettings(null, { ...base, "cache.enabled": "false" }).settings,
      log,
    );
    stopAll(off);
    assert.equal(off.columnCache, undefined);
    // The edge entry's way: the tree in a storage, no KV file of the host's for workers.
    const storage = await openKvStorage(join(root, "state.kv"));
    const place = await storagePlace(storage, log);
    const edge = buildDeps(
      homeLayout("/trawl-edge"),
      loadSettings(null, base).settings,
      log,
      undefined,
      storage,
      place,
    );
    stopAll(edge);
    place.stop?.();
    storage.close();
    assert.equal(edge.columnCache, undefined);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a file not cut by lines (a JSON array) is cached whole, and read again once changed", async () => {
  const { home, columnCache, real } = await setup();
  await using _ = home;
  const items = Array.from({ length: 300 }, (_, i) => ({ n: i, s: `v${i % 7}` }));
  const path = real.replace(/a\.log$/, "arr.json");
  await Deno.writeTextFile(path, JSON.stringify(items, null, 1));
  const text =
    `READ_JSON(src: '/shared/arr.json') | select(s, count(*) as c, sum(n) as t) | group(s) | sort(s)`;
  const cold = await same(home, text, columnCache);
  assert.ok(cold.stats.bytesRead > 0);
  const warm = await same(home, text, columnCache);
  assert.equal(warm.stats.bytesRead, 0);
  assert.equal(warm.stats.cacheBlocks, 1);
  // Grown (another element): the whole block is not taken for a prefix.
  await Deno.writeTextFile(path, JSON.stringify([...items, { n: 1000, s: "v1" }], null, 1));
  const grown = await same(home, text, columnCache);
  assert.ok(grown.stats.bytesRead > 0);
  assert.equal(grown.stats.cacheBlocks, 0);
  await same(home, text, columnCache);
});

Deno.test("a PARSE with another zone for its zone-less times is another entry, not the cached rows", async () => {
  const { home, columnCache } = await setup();
  await using _ = home;
  const at = (zone: string) =>
    `PARSE(src: '/shared/a.log', pattern: ${PATTERN}, zone: '${zone}') | select(min(ts) as first)`;
  const utc = await same(home, at("UTC"), columnCache);
  await same(home, at("UTC"), columnCache);
  // The same pattern, the same file: only the zone differs, and so must the times.
  const tallinn = await same(home, at("Europe/Tallinn"), columnCache);
  assert.notEqual(tallinn.rows, utc.rows);
  assert.equal(tallinn.stats.cacheBlocks, 0, "read raw: no entry of that zone yet");
});

Deno.test("READ_CSV is cached whole: its header names every line's fields; a changed file is read again", async () => {
  const { home, columnCache, real } = await setup();
  await using _ = home;
  const path = real.replace(/a\.log$/, "t.csv");
  const rows = (n: number) =>
    Array.from({ length: n }, (_, i) => `${i},"v${i % 5}, quoted",${i * 3}`).join("\n");
  await Deno.writeTextFile(path, `id,word,amount\n${rows(400)}\n`);
  const text = `READ_CSV(src: '/shared/t.csv') | filter(word != 'v0, quoted')
| select(word, count(*) as c, max(id) as top) | group(word) | sort(word)`;
  const cold = await same(home, text, columnCache);
  assert.ok(cold.stats.bytesRead > 0);
  const warm = await same(home, text, columnCache);
  assert.equal(warm.stats.bytesRead, 0);
  assert.equal(warm.stats.cacheBlocks, 1);
  const compiled = await compile({ text }, home.context({ columnCache }));
  assert.ok(compiled.ok);
  assert.match(
    explain(compiled.plan),
    /source READ_CSV\(src: '\/shared\/t\.csv'\) .* via column cache/,
  );
  // Grown by lines: a whole file's block is not taken for a prefix; the new rows count.
  await Deno.writeTextFile(path, `${rows(5)}\n`, { append: true });
  const grown = await same(home, text, columnCache);
  assert.ok(grown.stats.bytesRead > 0);
  assert.equal(grown.stats.cacheBlocks, 0);
  assert.notEqual(grown.rows, warm.rows);
  assert.equal((await same(home, text, columnCache)).stats.cacheBlocks, 1);
  // A file its reader warns about (more fields than the header) warns each time: never kept.
  await Deno.writeTextFile(path, `id,word,amount\n1,a,2\n3,b,4,5\n`);
  const bad = await same(home, text, columnCache);
  assert.ok(bad.warnings.length > 0, "the reader's warning");
  const again = await same(home, text, columnCache);
  assert.equal(again.stats.cacheBlocks, 0);
});

Deno.test("READ_W3C and READ_ZEEK are cached whole; a file grown by a new header is read again", async () => {
  const { home, columnCache, real } = await setup();
  await using _ = home;
  const samples = join(import.meta.dirname!, "samples");
  const w3c = real.replace(/a\.log$/, "u_ex.log");
  const zeek = real.replace(/a\.log$/, "conn.log");
  await Deno.copyFile(join(samples, "iis", "u_ex241105.log"), w3c);
  await Deno.copyFile(join(samples, "zeek", "conn.log"), zeek);
  const iis = `READ_W3C(src: '/shared/u_ex.log') | filter(\`sc-status\` >= 200)
| select(\`c-ip\`, \`sc-status\`, timestamp, \`time-taken\`, \`cs-username\`)`;
  const conn = `READ_ZEEK(src: '/shared/conn.log')
| select(ts, \`id.orig_h\`, \`id.resp_p\`, duration, orig_bytes, local_orig, tunnel_parents)`;
  for (const [text, source] of [[iis, "READ_W3C"], [conn, "READ_ZEEK"]] as const) {
    const cold = await same(home, text, columnCache);
    assert.ok(cold.stats.bytesRead > 0);
    assert.equal(cold.stats.cacheBlocks, 0);
    const warm = await same(home, text, columnCache);
    assert.equal(warm.stats.bytesRead, 0, source);
    assert.equal(warm.stats.cacheBlocks, 1, source);
    assert.equal(warm.rows, cold.rows);
    const compiled = await compile({ text }, home.context({ columnCache }));
    assert.ok(compiled.ok);
    assert.match(explain(compiled.plan), new RegExp(`source ${source}\\(.* via column cache`));
  }
  // A restart writes a new '#Fields:' naming other fields: the whole file is read again and
  // its new rows have the new fields.
  const before = await same(home, iis, columnCache);
  await Deno.writeTextFile(
    w3c,
    "#Fields: date time c-ip sc-status time-taken\n2024-11-05 01:00:00 192.0.2.99 503 7\n",
    { append: true },
  );
  const grown = await same(home, iis, columnCache);
  assert.ok(grown.stats.bytesRead > 0);
  assert.equal(grown.stats.cacheBlocks, 0);
  assert.notEqual(grown.rows, before.rows);
  assert.match(grown.rows, /192\.0\.2\.99/);
  assert.equal((await same(home, iis, columnCache)).stats.cacheBlocks, 1);
  // Line and raw fields are read from the bytes, never from the cache.
  const lines = `READ_W3C(src: '/shared/u_ex.log', line_field: 'n') | select(n, \`c-ip\`)`;
  await same(home, lines, columnCache);
  assert.equal((await same(home, lines, columnCache)).stats.cacheBlocks, 0);
});

Deno.test("a record skipped in a later block is named by its line in the file, cold, warm and on workers", async () => {
  const { home, columnCache, real } = await setup(2048);
  await using _ = home;
  const path = real.replace(/a\.log$/, "e.jsonl");
  let text = "";
  for (let i = 0; i < 600; i++) {
    // Blank lines and a bad record or two past the first blocks: the warning names a line.
    text += i === 411 ? "not json\n" : i === 90 ? "\n" : `{"n": ${i}, "s": "v${i % 3}"}\n`;
  }
  await Deno.writeTextFile(path, text);
  const q = `READ_JSON(src: '/shared/e.jsonl') | select(s, count(*) as c) | group(s) | sort(s)`;
  const workers = threeWorkers(home);
  try {
    const cold = await same(home, q, columnCache);
    assert.ok(cold.warnings.some((w) => /line 412\b/.test(w)), cold.warnings.join("\n"));
    const warm = await same(home, q, columnCache);
    assert.ok(warm.stats.cacheBlocks > 3);
    const plain = await run(home, q);
    for (let i = 0; i < 2; i++) {
      const on = await run(home, q, { columnCache, scanWorkers: workers });
      assert.equal(on.rows, plain.rows);
      assert.deepEqual(on.warnings, plain.warnings);
    }
  } finally {
    workers.close();
  }
});
