import assert from "node:assert/strict";
import { join } from "node:path";
import { parseSource } from "./parse_source.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import { hostEntry, testContext } from "../../tests/support/temp_tree.ts";
import type { FileEntry } from "../contracts/datastore.ts";
import { IpAddr, type Row } from "../values/values.ts";
import { Grouping } from "./aggregate.ts";
import type { AggregateSpec, PushedFilter } from "../plan/plan.ts";
import { newQueryStats } from "../plan/context.ts";
import { seededRandom } from "../../tests/support/seeded_random.ts";
import { foldSpec } from "../../tests/support/fold_spec.ts";

function pattern(text: string) {
  const r = compilePattern(text, { timeZone: "UTC" });
  if (!r.ok) throw new Error(r.message);
  return r.pattern;
}

async function withFiles(contents: string[], fn: (files: FileEntry[]) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "trawl-parse-" });
  try {
    const files: FileEntry[] = [];
    for (const [i, c] of contents.entries()) {
      const path = join(dir, `f${i}.log`);
      await Deno.writeTextFile(path, c);
      files.push(await hostEntry(path));
    }
    await fn(files);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function rows(source: AsyncIterable<readonly Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for await (const batch of source) out.push(...batch);
  return out;
}

Deno.test("parseSource() turns matching lines of every file into rows", async () => {
  const p = pattern("IPV4:ip ' ' INT:status ' ' WORD:word");
  await withFiles(["1.2.3.4 200 a\n5.6.7.8 404 b\n", "9.9.9.9 500 c"], async (files) => {
    const ctx = testContext();
    const got = await rows(parseSource(files, p, null, ctx));
    assert.deepEqual(got.map((r) => [(r.ip as IpAddr).bits, r.status, r.word]), [
      [0x01020304, 200, "a"],
      [0x05060708, 404, "b"],
      [0x09090909, 500, "c"],
    ]);
    assert.deepEqual(ctx.warnings, []);
  });
});

Deno.test("parseSource() builds only the needed fields", async () => {
  const p = pattern("IPV4:ip ' ' INT:status ' ' WORD:word");
  await withFiles(["1.2.3.4 200 a\n"], async (files) => {
    assert.deepEqual(await rows(parseSource(files, p, ["status"], testContext())), [
      { status: 200 },
    ]);
  });
});

Deno.test("parseSource() counts records that do not match in one warning per source", async () => {
  const p = pattern("INT:n");
  await withFiles(["1\nx\n2\n\n", "y\nz\n3\n"], async (files) => {
    const ctx = testContext();
    assert.deepEqual(await rows(parseSource(files, p, null, ctx)), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.equal(ctx.warnings.length, 1);
    assert.match(ctx.warnings[0]!.message, /PARSE skipped 3 records .*f0\.log/);
  });
});

Deno.test("parseSource() reads lines across chunk boundaries of a large file", async () => {
  const p = pattern("INT:n ' ' NSPACE:pad");
  const lines = Array.from({ length: 40_000 }, (_, i) => `${i} ${"p".repeat((i % 97) + 1)}`);
  await withFiles([lines.join("\n") + "\n"], async (files) => {
    assert.ok(files[0]!.size > 2 * (1 << 20));
    const ctx = testContext();
    const got = await rows(parseSource(files, p, ["n"], ctx));
    assert.equal(got.length, 40_000);
    assert.ok(got.every((r, i) => r.n === i));
    assert.deepEqual(ctx.warnings, []);
    assert.ok(ctx.progress.fraction > 0.99);
  });
});

Deno.test("parseSource() stops when the query is cancelled", async () => {
  const p = pattern("INT:n");
  await withFiles(["1\n".repeat(1_500_000)], async (files) => {
    const ac = new AbortController();
    let batches = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of parseSource(files, p, null, testContext(ac.signal))) {
          batches++;
          ac.abort();
        }
      })(),
      (e: Error) => e.name === "AbortError",
    );
    assert.equal(batches, 1);
  });
});

Deno.test("parseSource() keeps a multi-line record that a read chunk boundary cuts in two", async () => {
  const p = pattern("'A:' INT:a EOL 'B:' INT:b");
  // Records of 18 bytes ("A:000001\nB:000001\n") after 13 blank lines: the first 1 MiB read
  // ends just after an "A:" line, so that its "B:" line comes with the next read.
  const count = 60_000;
  const pad = (n: number) => String(n).padStart(6, "0");
  let text = "\n".repeat(13);
  for (let i = 0; i < count; i++) text += `A:${pad(i)}\nB:${pad(i)}\n`;
  assert.equal(((1 << 20) - 13) % 18, 9);
  await withFiles([text], async (files) => {
    const ctx = testContext();
    const got = await rows(parseSource(files, p, null, ctx));
    assert.equal(got.length, count);
    assert.ok(got.every((r, i) => r.a === i && r.b === i));
    assert.deepEqual(ctx.warnings, []);
  });
});

// ---------------------------------------------------------------------------------------------
// Records folded straight into a grouping (ctx.direct) against the same records as rows.

const ACCESS = `IPADDR:client ' ' NSPACE:ident ' ' NSPACE:user ' [' HTTPDATE:time '] "' ` +
  `NSPACE:method ' ' NSPACE:path ' ' NSPACE:protocol '" ' INT:status ' ' LONG:bytes? ' ' ` +
  `DQS:referrer ' ' DQS:agent`;

/** Access lines with the shapes that could make a folding scanner read wrong. */
function trickyAccessLog(lines: number): string {
  const r = seededRandom(9);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  // Mostly the first (plain) value, else any of them.
  const some = <T>(xs: readonly T[]) => r() < 0.7 ? xs[0] : pick(xs);
  const out: string[] = [];
  for (let k = 0; k < lines; k++) {
    const ip = r() < 0.97
      ? `10.0.${Math.floor(r() * 4)}.${Math.floor(r() * 40)}`
      : pick(["300.1.2.3", "::1", "fe80::2", "1.2.3", "0.0.0.0"]);
    const user = some(["-", "-", "frank", "a\tb", "jos\u00e9"]);
    const path = some(["/", "/a?b=c", "/x y", "/caf\u00e9", "/p\tq", "/\u00a0nbsp"]);
    const status = pick(["200", "200", "200", "404", "304", "99999999999", "-1", "+200"]);
    const bytes = some(["17", "0", "4096", "-", "-", "1234567890123456", "00042", "x"]);
    const referrer = some([
      `"-"`,
      `"https://a/b c"`,
      `"say \\"hi\\" there"`,
      `"back\\\\slash"`,
      `"tab\there"`,
      `"open`,
      `"caf\u00e9"`,
    ]);
    const agent = some([`"curl/8"`, `"Mozilla/5.0 (X11; Linux)"`, `"a \\" b"`, `""`]);
    const line = `${ip} - ${user} [01/May/2024:00:00:0${
      k % 10
    } +0000] "GET ${path} HTTP/1.1" ${status} ${bytes} ${referrer} ${agent}`;
    out.push(r() < 0.02 ? pick(["", "garbage", line.slice(0, 40), line + " trailing"]) : line);
  }
  return out.join("\n") + "\n";
}

/** The grouping's rows and what the source said, the records folded directly or as rows. */
async function grouped(
  files: FileEntry[],
  key: string,
  aggregates: AggregateSpec[],
  filter: PushedFilter | undefined,
  direct: boolean,
) {
  const options = {
    keys: [{ fn: (r: Row) => r[key] ?? null, label: key, field: key }],
    aggregates,
    outputs: [key, ...aggregates.map((a) => a.slot)].map((name) => ({
      name,
      label: name,
      fn: (r: Row) => r[name] ?? null,
    })),
  };
  const grouping = new Grouping(options);
  const ctx = { ...testContext(), stats: newQueryStats() };
  const fields = [...new Set([key, ...aggregates.flatMap((a) => a.argField ?? []), "status"])];
  const d = grouping.direct(ctx);
  assert.ok(d !== null);
  let handedOut = 0;
  // Rows handed to the grouping one by one (not folded by the scanner) count as handed out.
  const counted = {
    ...d,
    add: (row: Row) => {
      handedOut++;
      d.add(row);
    },
  };
  const source = parseSource(
    files,
    pattern(ACCESS),
    fields,
    direct ? { ...ctx, direct: counted } : ctx,
    filter,
  );
  for await (const batch of source) {
    handedOut += batch.length;
    grouping.add(batch);
  }
  const out: Row[] = [];
  for (const b of grouping.rows()) out.push(...b);
  return { out, handedOut, warnings: ctx.warnings, stats: ctx.stats };
}

Deno.test("parseSource() folds records into a grouping under it exactly as their rows would", async () => {
  const log = trickyAccessLog(30_000);
  await withFiles([log], async (files) => {
    const status200: PushedFilter = { reads: new Set(["status"]), keep: (r) => r.status === 200 };
    const cases: [string, AggregateSpec[], PushedFilter | undefined][] = [
      ["client", [foldSpec("sum", "bytes", "total")], status200],
      ["client", [foldSpec("count", null, "n"), foldSpec("count", "bytes", "c")], undefined],
      ["status", [foldSpec("count", null, "n"), foldSpec("sum", "bytes", "s")], undefined],
      ["bytes", [foldSpec("count", null, "n"), foldSpec("sum", "status", "s")], status200],
    ];
    for (const [key, aggregates, filter] of cases) {
      const rows = await grouped(files, key, aggregates, filter, false);
      const direct = await grouped(files, key, aggregates, filter, true);
      const label = `${key} ${aggregates.map((a) => a.label).join(" ")}`;
      assert.deepEqual(direct.out, rows.out, label);
      assert.deepEqual(direct.warnings, rows.warnings, label);
      assert.deepEqual(direct.stats, rows.stats, label);
      // Most records were folded without a row: the test went through the direct path.
      assert.ok(
        direct.handedOut * 2 < rows.handedOut,
        `${label}: ${direct.handedOut} of ${rows.handedOut} rows`,
      );
    }
    // The log has unmatched records of every kind and groups of null and IPv6 keys.
    const one = await grouped(files, "client", [foldSpec("count", null, "n")], undefined, true);
    assert.ok(one.stats.recordsUnmatched > 1000);
    assert.ok(one.out.some((r) => r.client === null));
    assert.ok(one.out.some((r) => r.client instanceof IpAddr && r.client.version === 6));
  });
});

Deno.test("parseSource() frees only read buffers made for one chunk: a stream of views of one buffer reads whole", async () => {
  const p = pattern("INT:n ' ' NSPACE:pad");
  const text = Array.from({ length: 30_000 }, (_, i) => `${i} ${"q".repeat(i % 50 + 1)}\n`).join(
    "",
  );
  const all = new TextEncoder().encode(text);
  // Chunks of 700 000 bytes cut lines; every chunk views the same buffer.
  const shared: FileEntry = {
    uri: "memory://shared.log",
    size: all.length,
    modified: 0,
    pathTime: null,
    open: () => {
      let at = 0;
      return Promise.resolve(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (at >= all.length) return controller.close();
            controller.enqueue(all.subarray(at, at + 700_000));
            at += 700_000;
          },
        }),
      );
    },
  };
  for (let round = 0; round < 2; round++) {
    const got = await rows(parseSource([shared], p, ["n"], testContext()));
    assert.equal(got.length, 30_000);
    assert.ok(got.every((r, i) => r.n === i));
  }
  assert.equal(all.byteLength, text.length); // not detached
});

Deno.test("parseSource() with ignoreUnmatched counts the records it skips and warns of none", async () => {
  const p = pattern("'ERROR ' WORD:code");
  await withFiles(["INFO a\nERROR e1\nDEBUG b\nERROR e2\nINFO c\n"], async (files) => {
    for (const ignore of [false, true]) {
      const ctx = { ...testContext(), stats: newQueryStats(), ignoreUnmatched: ignore };
      const got = await rows(parseSource(files, p, null, ctx));
      assert.deepEqual(got, [{ code: "e1" }, { code: "e2" }]);
      assert.equal(ctx.stats.recordsUnmatched, 3);
      assert.equal(ctx.warnings.length, ignore ? 0 : 1);
    }
  });
});
