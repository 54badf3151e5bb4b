import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { expectError, finished, SCRIPT_TYPE, startQuery } from "./client.ts";
import { FORMATS, type FormatSpec, headerOf, rowWriterOf } from "../../routes/formats.ts";

const SCRIPT = "VALUES((a: 1, s: 'x'), (a: 2, s: 'y'))";

function runSync(s: TestServer, headers: Record<string, string>, query = ""): Promise<Response> {
  return s.fetch("alice", `/API/v1.0/?scriptPath=/user${query}`, {
    method: "POST",
    headers: { ...SCRIPT_TYPE, ...headers },
    body: SCRIPT,
  });
}

/** Tab-separated values: a format the server does not offer, added to the table by a test. */
const TSV: FormatSpec = {
  aliases: ["application/tsv"],
  contentType: "text/tab-separated-values; charset=UTF-8",
  jsonRows: false,
  row: (columns) => (row) => columns.map((c) => String(row[c] ?? "")).join("\t"),
  header: (columns) => columns.join("\t") + "\n",
  start: "",
  separator: "",
  before: "",
  after: "\n",
  end: "",
};

Deno.test("every format of the table is answered with its own content type and rows", async () => {
  await using s = await startTestServer();
  for (const [mediaType, spec] of Object.entries(FORMATS) as [string, FormatSpec][]) {
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
  table["text/tab-separated-values"] = TSV;
  try {
    await using s = await startTestServer();
    const tsv = "a\ts\n1\tx\n2\ty\n";
    for (const accept of ["text/tab-separated-values", "application/tsv", "text/*"]) {
      const sync = await runSync(s, { Accept: accept });
      assert.equal(sync.status, 200, accept);
      assert.equal(sync.headers.get("Content-Type"), TSV.contentType);
      assert.equal(await sync.text(), tsv, accept);
    }
    const named = await runSync(s, {}, "&acceptContentType=application/tsv&opt.omitHeader=true");
    assert.equal(await named.text(), "1\tx\n2\ty\n");
    // Fixed when the query is posted (rows serialised while running), and chosen when fetched.
    const fixed = await startQuery(s, SCRIPT, { headers: { Accept: "application/tsv" } });
    assert.equal((await finished(s, fixed)).state, "SUCCEEDED");
    assert.equal(await (await s.fetch("alice", `/API/v1.0/queries/${fixed}/result`)).text(), tsv);
    const open = await startQuery(s, SCRIPT);
    assert.equal((await finished(s, open)).state, "SUCCEEDED");
    const late = await s.fetch("alice", `/API/v1.0/queries/${open}/result`, {
      headers: { Accept: "text/tab-separated-values" },
    });
    assert.equal(late.headers.get("Content-Type"), TSV.contentType);
    assert.equal(await late.text(), tsv);
    const saved = await startQuery(s, `${SCRIPT} | save('/user/t.sxt')`);
    assert.equal((await finished(s, saved)).state, "SUCCEEDED");
    const read = await s.fetch("alice", "/API/v1.0/tables/user/t.sxt", {
      headers: { Accept: "application/tsv" },
    });
    assert.equal(await read.text(), tsv);
  } finally {
    delete table["text/tab-separated-values"];
  }
});

Deno.test("an Accept or acceptContentType naming no format of the table is a 406", async () => {
  await using s = await startTestServer();
  for (
    const [headers, query] of [
      [{ Accept: "text/tab-separated-values" }, ""],
      [{ Accept: "text/*" }, ""],
      [{}, "&acceptContentType=application/tsv"],
    ] as const
  ) {
    const body = await expectError(await runSync(s, headers, query), 406, "NOT_ACCEPTABLE");
    assert.match(String(body.message), /application\/json, .*application\/csv/);
  }
});
