/**
 * The grid's refinements of a script (console/refine.ts) as Trawl's language writes them, and
 * the server's checker accepts them: literals by type, a column's filter text, sort lines
 * replaced rather than stacked.
 */

import assert from "node:assert/strict";
import {
  columnCondition,
  isAggregate,
  literal,
  trailingSort,
  valueCondition,
  withFilter,
  withoutTail,
  withRangeFilter,
  withSort,
  withSourceRange,
} from "../../console/refine.ts";
import { startTestServer } from "../api/server.ts";

Deno.test("literals and conditions by the schema's type", () => {
  assert.equal(literal("it's \\ here", "STRING"), "'it\\'s \\\\ here'");
  assert.equal(literal(42, "?LONG"), "42");
  assert.equal(literal("4x", "LONG"), null);
  assert.equal(
    literal("2024-05-01T13:00:00.000+00:00", "TIMESTAMP"),
    "T('2024-05-01T13:00:00.000+00:00')",
  );
  assert.equal(literal("10.0.0.1", "IPADDR"), "IP('10.0.0.1')");
  assert.equal(literal([1], "ARRAY"), null);
  assert.equal(valueCondition("user agent", "STRING", "curl", false), "`user agent` != 'curl'");
  assert.equal(valueCondition("ip", "?IPADDR", null, true), "ip is null");
  assert.equal(valueCondition("tags", "ARRAY", ["a"], true), null);
  assert.equal(columnCondition("status", "INTEGER", " >= 500 "), "status >= 500");
  assert.equal(columnCondition("status", "INTEGER", "404"), "status = 404");
  assert.equal(columnCondition("path", "STRING", "/api"), "contains(path, '/api')");
  assert.equal(columnCondition("ip", "IPADDR", "10.0."), "contains(STRING(ip), '10.0.')");
  assert.equal(columnCondition("path", "STRING", "  "), null);
});

Deno.test("a sort replaces the sort the grid added; a filter goes before it", () => {
  const base = "VALUES((a: 1))";
  const sorted = withSort(base, "a", "asc");
  assert.equal(sorted, "VALUES((a: 1))\n| sort(a)");
  assert.deepEqual(trailingSort(sorted), { field: "a", direction: "asc" });
  const again = withSort(sorted, "a", "desc");
  assert.equal(again, "VALUES((a: 1))\n| sort(a desc)");
  assert.equal(withFilter(again, "a > 0"), "VALUES((a: 1))\n| filter(a > 0)\n| sort(a desc)");
  assert.deepEqual(trailingSort(withSort(base, "user agent", "desc")), {
    field: "user agent",
    direction: "desc",
  });
  assert.equal(trailingSort("VALUES((a: 1)) | sort(a, b)"), null);
});

Deno.test("the server accepts every refinement the grid writes", async () => {
  await using s = await startTestServer();
  const base =
    "VALUES((`user agent`: 'x\\'y', ip: IP('10.0.0.1'), t: T('2024-05-01T13:00:00Z'), n: 2))";
  // Each with the number of rows it keeps of the one.
  const scripts: [string, number][] = [
    [withSort(base, "user agent", "desc"), 1],
    [withFilter(base, valueCondition("user agent", "STRING", "x'y", true)!), 1],
    [withFilter(base, valueCondition("ip", "IPADDR", "10.0.0.1", false)!), 0],
    [withFilter(base, valueCondition("t", "TIMESTAMP", "2024-05-01T13:00:00.000+00:00", true)!), 1],
    [withFilter(base, columnCondition("n", "LONG", "> 1")!), 1],
    [withFilter(base, columnCondition("n", "LONG", "3")!), 0],
    [withFilter(base, columnCondition("ip", "IPADDR", "10.0")!), 1],
  ];
  for (const [script, rows] of scripts) {
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: { "Content-Type": "text/plain", Accept: "application/json" },
      body: script,
    });
    const body = await res.text();
    assert.equal(res.status, 200, `${script}\n${body}`);
    assert.equal(JSON.parse(body).length, rows, `${script}\n${body}`);
  }
});

Deno.test("the time picker's bounds on every timed source and its filter, replaced not stacked", () => {
  const from = new Date("2024-10-10T00:00:00Z");
  const to = new Date("2024-10-11T00:00:00Z");
  const script = "PARSE(pattern: '''LD:x ',' EOL''', src: '/a.log', from: T('2020-01-01'))\n" +
    "| join(@[/b.sxt] on left.x = right.x)\n| filter(x != 'a, b)')";
  const once = withSourceRange(script, from, to);
  assert.equal(
    once,
    "PARSE(pattern: '''LD:x ',' EOL''', src: '/a.log', from: T('2024-10-10T00:00:00.000Z'), " +
      "to: T('2024-10-11T00:00:00.000Z'))\n| join(@[/b.sxt] on left.x = right.x)\n" +
      "| filter(x != 'a, b)')",
  );
  assert.equal(withSourceRange(once, from, to), once);
  assert.equal(
    withSourceRange(once, null, null),
    "PARSE(pattern: '''LD:x ',' EOL''', src: '/a.log')\n| join(@[/b.sxt] on left.x = right.x)\n" +
      "| filter(x != 'a, b)')",
  );
  const filtered = withRangeFilter("VALUES((t: now()))\n| sort(t)", "t", from, to);
  assert.equal(
    filtered,
    "VALUES((t: now()))\n| filter(t >= T('2024-10-10T00:00:00.000Z') and " +
      "t < T('2024-10-11T00:00:00.000Z'))\n| sort(t)",
  );
  assert.equal(withRangeFilter(filtered, "t", null, null), "VALUES((t: now()))\n| sort(t)");
  const limited = withRangeFilter("VALUES((t: now()))\n| limit(100)", "t", from, to);
  assert.match(limited, /^VALUES\(\(t: now\(\)\)\)\n\| filter\(t >= .*\)\n\| limit\(100\)$/);
  assert.equal(withRangeFilter(limited, "t", from, to), limited);
  assert.equal(withoutTail("VALUES((a: 1))\n| sort(a desc)\n| limit(100)"), "VALUES((a: 1))");
  assert.ok(isAggregate("X | select(host, count(*) as n) | group(host)"));
  assert.ok(!isAggregate("PARSE(pattern: '''LD:line EOL''', src: '/a') | limit(5)"));
});
