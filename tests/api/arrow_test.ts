/**
 * The Arrow IPC stream format (`application/vnd.apache.arrow.stream`), read back with
 * apache-arrow's RecordBatchReader: every Trawl type with its Arrow type, metadata and values,
 * nulls, Range by rows, and a result streamed in several batches.
 */

import assert from "node:assert/strict";
import { RecordBatchReader, type Table, tableFromIPC } from "apache-arrow";
import { startTestServer, type TestServer } from "./server.ts";
import { finished, SCRIPT_TYPE, startQuery } from "./client.ts";

const ARROW = "application/vnd.apache.arrow.stream";

const TYPED = `VALUES((i: 7, l: 9007199254740991L, d: 2.5, b: true, s: 'xé',
  t: T('2024-05-01T13:00:00Z'), iv: 90 s, ip: 10.0.0.1, net: NET('10.0.0.0/8'),
  arr: split('a,b', ',')),
  (i: null, l: -5L, d: null, b: null, s: null, t: null, iv: null, ip: null, net: null, arr: null))`;

function runSync(s: TestServer, script: string, query = "", headers = {}): Promise<Response> {
  return s.fetch("alice", `/API/v1.0/?scriptPath=/user${query}`, {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Accept: ARROW, ...headers },
    body: script,
  });
}

async function readArrow(res: Response): Promise<Table> {
  assert.equal(res.headers.get("Content-Type"), ARROW);
  const bytes = new Uint8Array(await res.arrayBuffer());
  // Read as a stream of batches, as a client would.
  const reader = RecordBatchReader.from(bytes);
  let batches = 0;
  for (const _ of reader) batches++;
  assert.ok(batches >= 0);
  return tableFromIPC(bytes);
}

Deno.test("an Arrow stream keeps every type, with metadata for the types Arrow lacks", async () => {
  await using s = await startTestServer();
  const res = await runSync(s, TYPED);
  assert.equal(res.status, 200);
  const table = await readArrow(res);
  const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));
  assert.deepEqual(types, {
    i: "Int32",
    l: "Int64",
    d: "Float64",
    b: "Bool",
    s: "Utf8",
    t: "Timestamp<MILLISECOND, UTC>",
    iv: "Duration<MILLISECOND>",
    ip: "Utf8",
    net: "Utf8",
    arr: "List<Utf8>",
  });
  const meta = (name: string) =>
    table.schema.fields.find((f) => f.name === name)!.metadata.get("trawl.type");
  assert.equal(meta("ip"), "IPADDR");
  assert.equal(meta("net"), "IPNET");
  assert.equal(meta("iv"), "INTERVAL");
  assert.equal(meta("s"), undefined);
  assert.equal(table.numRows, 2);
  const [first, second] = table.toArray().map((r) => r.toJSON());
  assert.equal(first.i, 7);
  assert.equal(first.l, 9007199254740991n, "LONG as an exact BigInt");
  assert.equal(first.d, 2.5);
  assert.equal(first.b, true);
  assert.equal(first.s, "xé");
  assert.equal(first.t, Date.parse("2024-05-01T13:00:00Z"));
  assert.equal(first.iv, 90000n);
  assert.equal(first.ip, "10.0.0.1");
  assert.equal(first.net, "10.0.0.0/8");
  assert.deepEqual([...first.arr], ["a", "b"]);
  assert.equal(second.l, -5n);
  for (const name of ["i", "d", "b", "s", "t", "iv", "ip", "net", "arr"]) {
    assert.equal(second[name], null, name);
  }
});

Deno.test("an Arrow stream keeps tuples as structs and takes opt.timezone for timestamps", async () => {
  await using s = await startTestServer();
  await s.write("/shared/t.json", '{"tup": {"x": 1, "y": "z"}, "n": [1, 2]}\n{"tup": null}\n');
  const json = await readArrow(await runSync(s, "READ_JSON(src: '/shared/t.json')"));
  assert.equal(
    String(json.schema.fields.find((f) => f.name === "tup")!.type),
    "Struct<{x:Int32, y:Utf8}>",
  );
  const rows = json.toArray().map((r) => r.toJSON());
  assert.deepEqual(rows[0].tup.toJSON(), { x: 1, y: "z" });
  assert.equal(rows[1].tup, null);
  const zoned = await readArrow(
    await runSync(s, "VALUES((t: T('2024-05-01T13:00:00Z')))", "&opt.timezone=Europe/Tallinn"),
  );
  assert.equal(String(zoned.schema.fields[0]!.type), "Timestamp<MILLISECOND, Europe/Tallinn>");
});

Deno.test("an Arrow result of many rows streams in batches and honours Range by rows", async () => {
  await using s = await startTestServer();
  const lines: string[] = [];
  for (let i = 0; i < 40_000; i++) lines.push(`${i} row`);
  await s.write("/shared/n.log", lines.join("\n") + "\n");
  const id = await startQuery(s, "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/n.log')", {
    headers: { Accept: ARROW },
  });
  await finished(s, id);
  const all = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, {
    headers: { Accept: ARROW },
  });
  const bytes = new Uint8Array(await all.arrayBuffer());
  let batches = 0;
  let rows = 0;
  for (const batch of RecordBatchReader.from(bytes)) {
    batches++;
    rows += batch.numRows;
  }
  assert.ok(batches > 1, `${batches} batches`);
  assert.equal(rows, 40_000);
  const part = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, {
    headers: { Range: "items=100-104" },
  });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get("Content-Range"), "items 100-104/40000");
  const t = await readArrow(part);
  assert.deepEqual(t.toArray().map((r) => r.n), [100, 101, 102, 103, 104]);
  // An empty result is a stream with the schema and no rows.
  const none = await readArrow(await runSync(s, "VALUES((a: 1)) | filter(a = 2)"));
  assert.equal(none.numRows, 0);
});
