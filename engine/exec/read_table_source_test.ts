import assert from "node:assert/strict";
import { join } from "node:path";
import { readTableSource, type RecordExtras, type TableFormat } from "./read_table_source.ts";
import { hostEntry, testContext } from "../../tests/support/temp_tree.ts";
import { IpAddr, type Row, Timestamp } from "../values/values.ts";

const CSV: TableFormat = { kind: "csv", delimiter: ",", header: true, quote: '"' };

async function read(
  content: string,
  format: TableFormat,
  needed: string[] | null = null,
  extra: RecordExtras = {},
): Promise<{ rows: Row[]; warnings: string[] }> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-table-" });
  try {
    const path = join(dir, "t.txt");
    await Deno.writeTextFile(path, content);
    const ctx = testContext();
    const rows: Row[] = [];
    for await (
      const b of readTableSource([await hostEntry(path)], format, needed, ctx, undefined, extra)
    ) {
      rows.push(...b);
    }
    return { rows, warnings: ctx.warnings.map((w) => w.message) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("READ_CSV reads a quoted field that spans lines across the pieces a file is read in", async () => {
  const long = "x".repeat(300_000);
  const text = `a,b\n1,"${long}\nsecond ""line"""\n2,last`; // no final line end
  const { rows } = await read(text, CSV);
  assert.equal(rows.length, 2);
  assert.equal(rows[0]!.b, `${long}\nsecond "line"`);
  assert.deepEqual(rows[1], { a: "2", b: "last" });
});

Deno.test("READ_CSV without a header names fields f_1...; short records get nulls", async () => {
  const format: TableFormat = { ...CSV, header: false };
  const { rows } = await read("1;2\r\n3\r\n", { ...format, delimiter: ";" });
  assert.deepEqual(rows, [{ f_1: "1", f_2: "2" }, { f_1: "3", f_2: null }]);
});

Deno.test("READ_CSV warns about records with more fields than the header, with the line", async () => {
  const { rows, warnings } = await read('a,b\n"x\ny",2\n1,2,3\n', CSV, ["b"]);
  assert.deepEqual(rows, [{ b: "2" }, { b: "2" }]);
  assert.match(
    warnings[0]!,
    /^READ_CSV: 1 record had more fields than the header .*line 4 of '.*t\.txt'/,
  );
});

Deno.test("READ_W3C skips lines before '#Fields:' with a warning and types known fields", async () => {
  const text = "2024-01-01 00:00:00 1.2.3.4\n#Fields: date time c-ip sc-bytes\n" +
    "2024-01-01 10:00:00 10.0.0.1 512\n2024-01-01 10:00:01 - -\n";
  const { rows, warnings } = await read(text, { kind: "w3c" });
  assert.deepEqual(rows[0], {
    date: "2024-01-01",
    time: "10:00:00",
    "c-ip": new IpAddr(4, 0x0a000001),
    "sc-bytes": 512,
    timestamp: new Timestamp(Date.UTC(2024, 0, 1, 10)),
  });
  assert.equal(rows[1]!["c-ip"], null);
  assert.match(warnings[0]!, /READ_W3C: 1 record came before a '#Fields:' line .*line 1 of/);
});

Deno.test("READ_ZEEK decodes escapes and takes its separators from the header", async () => {
  const text =
    "#separator \\x7c\n#set_separator|;\n#fields|msg|tags|n\n#types|string|vector[count]|double\n" +
    "a\\x7cb|1;2|0.5\n(empty)|(empty)|-\n";
  const { rows } = await read(text, { kind: "zeek" });
  assert.deepEqual(rows, [{ msg: "a|b", tags: [1, 2], n: 0.5 }, { msg: "", tags: [], n: null }]);
});

Deno.test("READ_CSV with line and raw fields: a record's first line and its text across pieces, CRLF as LF", async () => {
  const long = "x".repeat(300_000);
  const text = `a,b\r\n1,"${long}\r\nsecond ""line"""\r\n\r\n2,last`; // no final line end
  const extra = { line: "n", raw: "r" };
  const { rows } = await read(text, CSV, null, extra);
  assert.deepEqual(rows.map((r) => r.n), [2, 5]);
  assert.equal(rows[0]!.r, `1,"${long}\nsecond ""line"""`);
  assert.deepEqual(rows[1], { a: "2", b: "last", n: 5, r: "2,last" });
  // Only the fields the query reads, and the two asked for.
  const some = await read(text, CSV, ["b", "n"], { line: "n" });
  assert.deepEqual(some.rows[1], { b: "last", n: 5 });
});

Deno.test("READ_ZEEK and READ_W3C with line and raw fields: header lines counted", async () => {
  const zeek =
    "#separator \\x09\n#fields\tuid\tn\n#types\tstring\tcount\nC1\t1\n\nC2\t2\n#close\tx\n";
  const { rows } = await read(zeek, { kind: "zeek" }, null, { line: "_line", raw: "_raw" });
  assert.deepEqual(rows, [
    { uid: "C1", n: 1, _line: 4, _raw: "C1\t1" },
    { uid: "C2", n: 2, _line: 6, _raw: "C2\t2" },
  ]);
  const w3c = "#Fields: date time cs-method\r\n2024-11-05 00:00:03 GET\r\n";
  const iis = await read(w3c, { kind: "w3c" }, ["cs-method", "l", "t"], { line: "l", raw: "t" });
  assert.deepEqual(iis.rows, [{ "cs-method": "GET", l: 2, t: "2024-11-05 00:00:03 GET" }]);
});
