/**
 * Queries that used to hold the server for everyone, against a real server: a join multiplying
 * rows, regular expressions, like patterns and globs that backtrack, scripts long enough to
 * overflow the stack. Another user's requests are answered while they run, a DELETE stops them,
 * and mistakes get a clear 400.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "../api/server.ts";
import { expectError, finished, SCRIPT_TYPE, startQuery, status } from "../api/client.ts";

const ROWS = `VALUES(${Array.from({ length: 1000 }, (_, i) => `(k: 1, i: ${i})`).join(", ")})`;
const JOIN_ATTACK = `@a = ${ROWS};
@a | join(@a on left.k = right.k) | select(k, i) | join(@a on left.k = right.k) | select(k, i)`;

/** Times of bob's `/healthz` and a small synchronous query, sent one after another until `done`. */
async function othersWhile(s: TestServer, done: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!done()) {
    for (
      const send of [
        () => fetch(`${s.url}/healthz`),
        () =>
          s.fetch("bob", "/API/v1.0/?scriptPath=/user", {
            method: "POST",
            headers: SCRIPT_TYPE,
            body: "VALUES((a: 1))",
          }),
      ]
    ) {
      const started = performance.now();
      const res = await send();
      assert.equal(res.status, 200);
      await res.body?.cancel();
      times.push(performance.now() - started);
    }
  }
  return times;
}

function percentile(times: number[], p: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

Deno.test("a join multiplying rows leaves other users served and stops on DELETE", async () => {
  await using s = await startTestServer();
  const limited = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: `${JOIN_ATTACK} | limit(10)`,
  });
  assert.equal(limited.status, 200);
  assert.equal((await limited.json()).length, 10);

  const id = await startQuery(s, JOIN_ATTACK);
  let stop = false;
  const stopAt = performance.now() + 1500;
  const times = await othersWhile(s, () => stop || performance.now() > stopAt);
  stop = true;
  assert.equal((await status(s, id)).state, "RUNNING");
  const sent = performance.now();
  const res = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  await res.body?.cancel();
  const st = await finished(s, id);
  assert.equal(st.state, "CANCELLED");
  const took = performance.now() - sent;
  // The guarantee (100 ms p99, CANCELLED within 200 ms) is pinned over 200 samples per attack
  // by tests/api/guarantee_test.ts; over these few, the p95 and the DELETE.
  assert.ok(took < 200, `CANCELLED ${took.toFixed(0)} ms after the DELETE`);
  assert.ok(times.length >= 6, `requests answered meanwhile: ${times.length}`);
  // Measured at a load of 5 (two cores): median 3 ms, p95 25-105 ms over ~120 requests. The
  // bound of 100 ms is guarantee_test's, which corrects for the machine's own load; this one,
  // over fewer samples and no correction, only catches a loop held for good.
  assert.ok(percentile(times, 0.5) < 50, `median ${percentile(times, 0.5).toFixed(0)} ms`);
  assert.ok(percentile(times, 0.95) < 200, `p95 ${percentile(times, 0.95).toFixed(0)} ms`);
  const slowest = Math.max(...times);
  // deno-lint-ignore no-console
  console.log(
    `join: median ${percentile(times, 0.5).toFixed(0)} ms, p95 ${
      percentile(times, 0.95).toFixed(0)
    } ms, slowest ${slowest.toFixed(0)} ms, DELETE ${took.toFixed(0)} ms`,
  );
  assert.ok(slowest < 500, `slowest ${slowest.toFixed(0)} ms`);
});

Deno.test("backtracking regular expressions, like patterns and globs answer at once", async () => {
  await using s = await startTestServer();
  await s.write("/shared/evil.log", `${"a".repeat(29)}!\n${"a".repeat(40)}\n`);
  await s.write(`/shared/globs/${"a".repeat(200)}.log`, "x\n");
  const source = `PARSE(pattern: '''LD:s EOL''', src: '/shared/evil.log')`;
  const scripts: [string, number][] = [
    [`${source} | filter(s ~ '^(a+)+$')`, 1],
    [`${source} | filter(s like '%a%a%a%a%a%a%a%b')`, 0],
    [`${source} | select(regex_extract(s, '^(a|a)+$') as x) | filter(x is not null)`, 1],
    [`PARSE(pattern: '''REGEX('(a+)+$'):s EOL''', src: '/shared/evil.log')`, 1],
    [`LIST(src: '/shared/globs/*a*a*a*a*a*a*a*b')`, 0],
    [`LIST(src: '/shared/globs/*a*a*a*a*a*a*a*.log')`, 1],
  ];
  for (const [body, count] of scripts) {
    const started = performance.now();
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(JSON.parse(text).length, count, body);
    const ms = performance.now() - started;
    assert.ok(ms < 1000, `${body}: ${ms.toFixed(0)} ms`);
  }
  const refused = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: `${source} | filter(s ~ '''(a)\\1''')`,
  });
  const error = await expectError(refused, 400, "SYNTAX_ERROR");
  assert.match(String(error.message), /backreference/);
});

Deno.test("10 000-term chains and 5 000 filters are a 400 naming the limit, not a 500", async () => {
  await using s = await startTestServer();
  const cases: [string, RegExp][] = [
    [`VALUES((a: 1)) | select(${Array(10_000).fill("1").join(" + ")} as x)`, /expression too long/],
    [`VALUES((a: 1)) | filter(${Array(10_000).fill("a = 1").join(" or ")})`, /expression too long/],
    [`VALUES((a: 1))${" | filter(true)".repeat(5000)}`, /pipeline too long/],
  ];
  for (const [body, message] of cases) {
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body,
    });
    const error = await expectError(res, 400, "SYNTAX_ERROR");
    assert.match(JSON.stringify(error), message);
  }
  const health = await fetch(`${s.url}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
});

Deno.test("other users are served while the backtracking patterns run, and the server is healthy after", async () => {
  await using s = await startTestServer();
  await s.write("/shared/evil.log", `${"a".repeat(29)}!\n`.repeat(200));
  await s.write(`/shared/globs/${"a".repeat(200)}.log`, "x\n");
  const source = `PARSE(pattern: '''LD:s EOL''', src: '/shared/evil.log')`;
  const attacks = [
    `${source} | filter(s ~ '^(a+)+$')`,
    `${source} | filter(s like '%a%a%a%a%a%a%a%b')`,
    `${source} | select(regex_extract(s, '^(a|a)+$') as x)`,
    `PARSE(pattern: '''REGEX('(a+)+$'):s EOL''', src: '/shared/evil.log')`,
    `LIST(src: '/shared/globs/*a*a*a*a*a*a*a*b')`,
  ];
  let done = false;
  const running = Promise.all(attacks.map(async (body) => {
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body,
    });
    assert.equal(res.status, 200, body);
    await res.body?.cancel();
  })).finally(() => done = true);
  const times = await othersWhile(s, () => done);
  await running;
  if (times.length > 0) {
    assert.ok(Math.max(...times) < 1000, `slowest ${Math.max(...times).toFixed(0)} ms`);
  }
  const health = await fetch(`${s.url}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
});

Deno.test("chained streams, a deeply nested JSON line and a long table name get clear answers from a real server", async () => {
  // 5000 chained streams take about 150 KiB of script: over the default size, under this one.
  await using s = await startTestServer({ "query.maxScriptBytes": "1 MiB" });
  const lines = ["@s0 = VALUES((a: 1));"];
  for (let i = 1; i <= 5000; i++) lines.push(`@s${i} = @s${i - 1} | filter(true);`);
  const post = (body: string) =>
    s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body,
    });
  const streams = await expectError(await post(`${lines.join("\n")}\n@s5000`), 400, "SYNTAX_ERROR");
  assert.match(JSON.stringify(streams), /pipeline too long/);

  // One line nested 2000 deep is skipped with a warning; the others are read.
  await s.write(
    "/shared/deep.json",
    `{"a": 1}\n{"a": ${"[".repeat(2000)}${"]".repeat(2000)}}\n{"a": 3}\n`,
  );
  const id = await startQuery(s, `READ_JSON(src: '/shared/deep.json') | select(a)`);
  const st = await finished(s, id);
  assert.equal(st.state, "SUCCEEDED", JSON.stringify(st));
  assert.ok(st.warnings.some((w) => /deep\.json/.test(w.message)), JSON.stringify(st.warnings));
  const rows = await (await s.fetch("alice", `/API/v1.0/queries/${id}/result`)).json();
  assert.deepEqual(rows, [{ a: 1 }, { a: 3 }]);

  // A 234-character table name is saved and read back (no ENAMETOOLONG, no 500).
  const name = `${"t".repeat(234)}.sxt`;
  const saved = await post(`VALUES((a: 1)) | save('/user/${name}')`);
  assert.equal(saved.status, 200, await saved.clone().text());
  await saved.body?.cancel();
  const back = await post(`@[/user/${name}]`);
  assert.equal(back.status, 200);
  assert.equal(await back.text(), '[{"a":1}]');

  const health = await fetch(`${s.url}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
});
