import assert from "node:assert/strict";
import { type RenderOptions, toJsonValue, toText } from "./render.ts";
import { parseIp, parseNet } from "../values/ip.ts";
import { Interval, type Row, Timestamp } from "../values/values.ts";
import { compileRowTextWriter, headerText } from "./render_bytes.ts";

const MS = Date.UTC(2024, 4, 1, 13);
const berlin = { timeZone: "Europe/Berlin" };

const row: Row = {
  i: 42,
  d: 2.5,
  inf: Infinity,
  s: 'say "hi";\n',
  b: true,
  t: new Timestamp(MS),
  iv: new Interval(90_000),
  ip: parseIp("2001:db8::1"),
  net: parseNet("10.0.0.0/8"),
  arr: [1, "x", null],
  tup: { a: 1, when: new Timestamp(MS) },
  n: null,
};
const columns = Object.keys(row).concat(["missing"]);

const jsonRow = (columns: readonly string[], opts: RenderOptions) =>
  compileRowTextWriter("json", columns, opts);
const csvRow = (columns: readonly string[], opts: RenderOptions) =>
  compileRowTextWriter("csv", columns, opts);

Deno.test("toJsonValue() renders every kind as API.md says", () => {
  assert.deepEqual(toJsonValue(row, berlin), {
    i: 42,
    d: 2.5,
    inf: null,
    s: 'say "hi";\n',
    b: true,
    t: "2024-05-01T15:00:00.000+02:00",
    iv: 90000,
    ip: "2001:db8::1",
    net: "10.0.0.0/8",
    arr: [1, "x", null],
    tup: { a: 1, when: "2024-05-01T15:00:00.000+02:00" },
    n: null,
  });
  assert.equal(
    toJsonValue(new Timestamp(MS), { timeZone: "UTC", timestampFormat: "yyyy-MM-dd HH:mm" }),
    "2024-05-01 13:00",
  );
});

Deno.test("a JSON row writes the same object JSON.stringify of toJsonValue would", () => {
  const write = jsonRow(columns, berlin);
  const expected = { ...(toJsonValue(row, berlin) as object), missing: null };
  assert.equal(write(row), JSON.stringify(expected));
  assert.deepEqual(JSON.parse(write(row)), expected);
  assert.equal(jsonRow([], berlin)({}), "{}");
  const quoted = jsonRow(["t"], { timeZone: "UTC", timestampFormat: `'"'yyyy` });
  assert.equal(quoted({ t: new Timestamp(MS) }), '{"t":"\\"2024"}');
});

Deno.test("a CSV row quotes text, leaves numbers bare and nulls empty", () => {
  const write = csvRow(["i", "s", "b", "t", "iv", "ip", "arr", "n", "inf"], berlin);
  assert.equal(
    write(row),
    '42;"say ""hi"";\n";true;"2024-05-01T15:00:00.000+02:00";90000;"2001:db8::1";' +
      '"[1,""x"",null]";;',
  );
  assert.equal(headerText("csv", ["a", 'b"c']), '"a";"b""c"\n');
});

Deno.test("toText() gives CSV cell text, and null for null", () => {
  assert.equal(toText(null, berlin), null);
  assert.equal(toText("x", berlin), "x");
  assert.equal(toText(new Interval(5), berlin), "5");
  assert.equal(toText({ a: [1] }, berlin), '{"a":[1]}');
  assert.equal(toText(false, berlin), "false");
});

Deno.test("a JSON row writes each of many varied rows as JSON.stringify of toJsonValue", () => {
  const columns = ["time", "client", "status", "path", "bytes", "note"];
  const write = jsonRow(columns, berlin);
  const notes = [null, "", "plain", 'quote " and \\', "line\nbreak\ttab", "é ✓ \u2028", "\u0000"];
  for (let i = 0; i < 2000; i++) {
    const r: Row = {
      time: new Timestamp(MS + i * 999_983),
      client: i % 7 === 0 ? null : parseIp(i % 3 === 0 ? `2001:db8::${i}` : `10.0.${i % 256}.1`),
      status: 200 + (i % 5),
      path: `/index/${i}.html`,
      bytes: i % 11 === 0 ? null : i * 17.25,
      note: notes[i % notes.length]!,
    };
    const text = write(r);
    assert.equal(text, JSON.stringify(toJsonValue(r, berlin)), `row ${i}`);
    assert.deepEqual(Object.keys(JSON.parse(text)), columns);
  }
  assert.equal(
    write({
      time: new Timestamp(MS),
      client: parseIp("10.0.0.1"),
      status: 200,
      path: "/",
      bytes: 5,
      note: 'a"b',
    }),
    '{"time":"2024-05-01T15:00:00.000+02:00","client":"10.0.0.1","status":200,"path":"/",' +
      '"bytes":5,"note":"a\\"b"}',
  );
});
