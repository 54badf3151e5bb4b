import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { expectError, finished, SCRIPT_TYPE, startQuery } from "./client.ts";
import {
  batchWriterOf,
  FORMATS,
  type FormatSpec,
  headerOf,
  rowWriterOf,
} from "../../routes/formats.ts";

const SCRIPT = "VALUES((a: 1, s: 'x'), (a: 2, s: 'y'))";

function runSync(s: TestServer, headers: Record<string, string>, query = ""): Promise<Response> {
  return s.fetch("alice", `/API/v1.0/?scriptPath=/user${query}`, {
    method: "POST",
    headers: { ...SCRIPT_TYPE, ...headers },
    body: SCRIPT,
  });
}

/**
 * Tab-separated lines ended by CRLF: a media type the server does not offer, added to the table by
 * a test. (A new text format of its own is an entry of engine/render_bytes.ts, the one writer of
 * rows as text; its `TEXT_FORMATS` makes the compiler ask for it.)
 */
const PSV: FormatSpec = {
  aliases: ["application/x-psv"],
  contentType: "text/x-pipe-separated; charset=UTF-8",
  jsonRows: false,
  text: "tsv",
  start: "",
  separator: "",
  before: "",
  after: "\r\n",
  end: "",
};

Deno.test("every format of the table is answered with its own content type and rows", async () => {
  await using s = await startTestServer();
  for (const [mediaType, spec] of Object.entries(FORMATS) as [string, FormatSpec][]) {
    // Binary formats have tests of their own (arrow_test.ts).
    if (batchWriterOf(spec)) continue;
    const res = await runSync(s, { Accept: mediaType });
    assert.equal(res.status, 200, mediaType);
    assert.equal(res.headers.get("Content-Type"), spec.contentType);
    const text = await res.text();
    const write = rowWriterOf(spec)(["a", "s"], { timeZone: "UTC" });
    const expected = headerOf(spec, ["a", "s"]) + spec.start +
      spec.before + write({ a: 1, s: "x" }) + spec.after + spec.separator +
      spec.before + write({ a: 2, s: "y" }) + spec.after + spec.end;
    assert.equal(text, expected, mediaType);
    if (spec.jsonRows) assert.ok(text.includes('{"a":1,"s":"x"}'), mediaType);
  }
});

Deno.test("a format added to the table is negotiated and written by every result route", async () => {
  const table = FORMATS as Record<string, FormatSpec>;
  table["text/x-pipe-separated"] = PSV;
  try {
    await using s = await startTestServer();
    const tsv = "a\ts\n1\tx\r\n2\ty\r\n";
    for (const accept of ["text/x-pipe-separated", "application/x-psv"]) {
      const sync = await runSync(s, { Accept: accept });
      assert.equal(sync.status, 200, accept);
      assert.equal(sync.headers.get("Content-Type"), PSV.contentType);
      assert.equal(await sync.text(), tsv, accept);
    }
    const named = await runSync(s, {}, "&acceptContentType=application/x-psv&opt.omitHeader=true");
    assert.equal(await named.text(), "1\tx\r\n2\ty\r\n");
    // Fixed when the query is posted (rows serialised while running), and chosen when fetched.
    const fixed = await startQuery(s, SCRIPT, { headers: { Accept: "application/x-psv" } });
    assert.equal((await finished(s, fixed)).state, "SUCCEEDED");
    assert.equal(await (await s.fetch("alice", `/API/v1.0/queries/${fixed}/result`)).text(), tsv);
    const open = await startQuery(s, SCRIPT);
    assert.equal((await finished(s, open)).state, "SUCCEEDED");
    const late = await s.fetch("alice", `/API/v1.0/queries/${open}/result`, {
      headers: { Accept: "text/x-pipe-separated" },
    });
    assert.equal(late.headers.get("Content-Type"), PSV.contentType);
    assert.equal(await late.text(), tsv);
    const saved = await startQuery(s, `${SCRIPT} | save('/user/t.sxt')`);
    assert.equal((await finished(s, saved)).state, "SUCCEEDED");
    const read = await s.fetch("alice", "/API/v1.0/tables/user/t.sxt", {
      headers: { Accept: "application/x-psv" },
    });
    assert.equal(await read.text(), tsv);
  } finally {
    delete table["text/x-pipe-separated"];
  }
});

Deno.test("an Accept or acceptContentType naming no format of the table is a 406", async () => {
  await using s = await startTestServer();
  for (
    const [headers, query] of [
      [{ Accept: "text/x-pipe-separated" }, ""],
      [{ Accept: "image/*" }, ""],
      [{}, "&acceptContentType=application/x-psv"],
    ] as const
  ) {
    const body = await expectError(await runSync(s, headers, query), 406, "NOT_ACCEPTABLE");
    assert.match(String(body.message), /application\/json, .*application\/csv/);
  }
});

Deno.test("TSV escapes tabs, line ends and backslashes inside values, and null is empty", async () => {
  await using s = await startTestServer();
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Accept: "application/tsv" },
    body: "VALUES((a: 'x\\ty', b: 1), (a: 'p\\nq\\\\r', b: null)) | select(a, b)",
  });
  assert.equal(res.headers.get("Content-Type"), "text/tab-separated-values; charset=UTF-8");
  assert.equal(await res.text(), "a\tb\nx\\ty\t1\np\\nq\\\\r\t\n");
});

Deno.test("opt.timestampNanoFormat is a synonym of opt.timestampFormat, and not both at once", async () => {
  await using s = await startTestServer();
  const script = "VALUES((t: T('2024-05-01 13:00:00')))";
  const run = (query: string) =>
    s.fetch("alice", `/API/v1.0/?scriptPath=/user${query}`, {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: script,
    });
  const nano = await run("&opt.timestampNanoFormat=" + encodeURIComponent("yyyy-MM-dd HH:mm"));
  assert.deepEqual(await nano.json(), [{ t: "2024-05-01 13:00" }]);
  await expectError(
    await run("&opt.timestampNanoFormat=yyyy&opt.timestampFormat=yyyy"),
    400,
    "BAD_PARAMETER",
  );
});
