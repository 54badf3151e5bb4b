import assert from "node:assert/strict";
import fc from "fast-check";
import { join } from "node:path";
import { arrayOf, type Field, scalar, type Schema, tupleOf, type Type } from "../values/types.ts";
import { Interval, IpAddr, IpNet, type Row, Timestamp, type Value } from "../values/values.ts";
import { createTableWriter } from "./table_writer.ts";
import { readTable, readTableSchema } from "./table_reader.ts";
import { writeTable } from "../../tests/support/write_table.ts";
import { hostFiles } from "../../tests/support/host_files.ts";

async function* batches(rows: readonly Row[], size = 3): AsyncIterable<readonly Row[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

async function readAll(path: string): Promise<Row[]> {
  const out: Row[] = [];
  for await (const b of readTable(hostFiles, path)) out.push(...b);
  return out;
}

function field(name: string, type: Type, nullable = true): Field {
  return { name, type, nullable };
}

const everyType: Schema = [
  field("b", scalar("BOOLEAN")),
  field("i", scalar("INTEGER")),
  field("l", scalar("LONG")),
  field("d", scalar("DOUBLE")),
  field("s", scalar("STRING")),
  field("t", scalar("TIMESTAMP")),
  field("ip", scalar("IPADDR")),
  field("net", scalar("IPNET")),
  field("iv", scalar("INTERVAL")),
  field("tags", arrayOf(scalar("STRING"))),
  field("who", tupleOf([field("name", scalar("STRING")), field("at", scalar("TIMESTAMP"))])),
];

Deno.test("writeTable then readTable gives back every type exactly", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "all.sxt");
  const rows: Row[] = [
    {
      b: true,
      i: -7,
      l: 2 ** 53,
      d: -0,
      s: '~tilde\nnew line \u2028 "q"',
      t: new Timestamp(1714561200123),
      ip: new IpAddr(4, 0xc0a80001),
      net: new IpNet(new IpAddr(6, 0x20010db8n << 96n), 32),
      iv: new Interval(-90_000),
      tags: ["a", "~b", ""],
      who: { name: "ann", at: new Timestamp(0) },
    },
    {
      b: false,
      i: 0,
      l: -(2 ** 53),
      d: NaN,
      s: "",
      t: null,
      ip: new IpAddr(6, (1n << 128n) - 1n),
      net: new IpNet(new IpAddr(4, 0x0a000000), 8),
      iv: null,
      tags: [],
      who: null,
    },
    {
      b: null,
      i: null,
      l: null,
      d: Infinity,
      s: null,
      t: null,
      ip: null,
      net: null,
      iv: null,
      tags: null,
      who: { name: null, at: null },
    },
  ];
  const result = await writeTable(path, everyType, batches(rows));
  assert.equal(result.rows, 3);
  assert.equal(result.bytes, (await Deno.stat(path)).size);
  assert.deepEqual(await readTableSchema(hostFiles, path), everyType);
  const back = await readAll(path);
  assert.deepEqual(back, rows);
  assert.ok(Object.is(back[0]!.d, -0));
  assert.ok(back[0]!.t instanceof Timestamp && back[0]!.ip instanceof IpAddr);
  assert.deepEqual(Array.from(Deno.readDirSync(dir), (e) => e.name), ["all.sxt"]);
});

// Random schemas with nested TUPLE/ARRAY and random rows of those schemas.
const scalarTypes = [
  "BOOLEAN",
  "INTEGER",
  "LONG",
  "DOUBLE",
  "STRING",
  "TIMESTAMP",
  "IPADDR",
  "IPNET",
  "INTERVAL",
] as const;
const typeArb: fc.Arbitrary<Type> = fc.letrec<{ type: Type }>((tie) => ({
  type: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(...scalarTypes).map((k) => scalar(k)),
    tie("type").map((t) => arrayOf(t)),
    fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), tie("type"), fc.boolean()), {
      maxLength: 3,
      selector: (x) => x[0],
    }).map((fs) => tupleOf(fs.map(([name, type, nullable]) => ({ name, type, nullable })))),
  ),
})).type;

function valueArb(t: Type): fc.Arbitrary<Value> {
  const v = ((): fc.Arbitrary<Value> => {
    switch (t.kind) {
      case "BOOLEAN":
        return fc.boolean();
      case "INTEGER":
        return fc.integer();
      case "LONG":
        return fc.maxSafeInteger();
      case "DOUBLE":
        return fc.double();
      case "STRING":
        return fc.string({ unit: "binary" });
      case "TIMESTAMP":
        return fc.integer({ min: -8.64e12, max: 8.64e12 }).map((ms) => new Timestamp(ms));
      case "INTERVAL":
        return fc.maxSafeInteger().map((ms) => new Interval(ms));
      case "IPADDR":
        return ipArb;
      case "IPNET":
        return fc.tuple(ipArb, fc.integer({ min: 0, max: 128 })).map(([ip, p]) =>
          new IpNet(ip, ip.version === 4 ? p % 33 : p)
        );
      case "ARRAY":
        return fc.array(valueArb(t.element), { maxLength: 3 });
      case "TUPLE":
        return fc.record(Object.fromEntries(t.fields.map((f) => [f.name, valueArb(f.type)])))
          .map((r) => ({ ...r }));
      default:
        return fc.constant(null);
    }
  })();
  return fc.option(v, { freq: 4 });
}
const ipArb: fc.Arbitrary<IpAddr> = fc.oneof(
  fc.nat({ max: 0xffffffff }).map((n) => new IpAddr(4, n)),
  fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).map((n) => new IpAddr(6, n)),
);

Deno.test("save then read is the identity on random tables", async () => {
  const dir = await Deno.makeTempDir();
  let n = 0;
  const tableArb = fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), typeArb), {
    minLength: 1,
    maxLength: 5,
    selector: (x) => x[0],
  }).chain((fs) => {
    const schema: Schema = fs.map(([name, type]) => ({ name, type, nullable: true }));
    const rowArb = fc.record(Object.fromEntries(schema.map((f) => [f.name, valueArb(f.type)])))
      .map((r) => ({ ...r }));
    return fc.tuple(fc.constant(schema), fc.array(rowArb, { maxLength: 12 }));
  });
  await fc.assert(
    fc.asyncProperty(tableArb, async ([schema, rows]) => {
      const path = join(dir, `t${n++}.sxt`);
      await writeTable(path, schema, batches(rows as Row[]));
      assert.deepEqual(await readTableSchema(hostFiles, path), schema);
      const back = await readAll(path);
      // deepEqual treats NaN as NaN and distinguishes -0 from 0.
      assert.deepEqual(back, rows);
    }),
    { numRuns: 60 },
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("an aborted write leaves the previous table and no temporary file", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "t.sxt");
  const schema: Schema = [field("n", scalar("INTEGER"))];
  await writeTable(path, schema, batches([{ n: 1 }, { n: 2 }]));
  const controller = new AbortController();
  async function* endless(): AsyncIterable<readonly Row[]> {
    for (let i = 0;; i++) {
      if (i === 5) controller.abort(new Error("stop"));
      yield [{ n: 100 + i }];
    }
  }
  await assert.rejects(writeTable(path, schema, endless(), controller.signal), /stop/);
  assert.deepEqual(await readAll(path), [{ n: 1 }, { n: 2 }]);
  assert.deepEqual(Array.from(Deno.readDirSync(dir), (e) => e.name), ["t.sxt"]);

  const writer = createTableWriter(hostFiles, path, schema);
  await writer.write([{ n: 9 }]);
  await writer.abort();
  assert.deepEqual(await readAll(path), [{ n: 1 }, { n: 2 }]);
  assert.deepEqual(Array.from(Deno.readDirSync(dir), (e) => e.name), ["t.sxt"]);
});

Deno.test("commit with a widened schema rewrites the header, even past its reserved size", async () => {
  const dir = await Deno.makeTempDir();
  for (const extra of [1, 400]) {
    const path = join(dir, `w${extra}.sxt`);
    const writer = createTableWriter(hostFiles, path, [field("a", scalar("INTEGER"))]);
    await writer.write([{ a: 1 }]);
    const wide: Row = { a: 2.5 };
    for (let k = 0; k < extra; k++) wide[`new_field_with_a_long_name_${k}`] = "x";
    await writer.write([wide]);
    const finalSchema: Schema = [
      field("a", scalar("DOUBLE")),
      ...Object.keys(wide).slice(1).map((k) => field(k, scalar("STRING"))),
    ];
    const { rows } = await writer.commit(finalSchema);
    assert.equal(rows, 2);
    assert.deepEqual(await readTableSchema(hostFiles, path), finalSchema);
    const back = await readAll(path);
    assert.equal(back[0]!.a, 1);
    assert.equal(back[0]!.new_field_with_a_long_name_0, null);
    assert.deepEqual(back[1], wide);
  }
  assert.deepEqual(Array.from(Deno.readDirSync(dir), (e) => e.name).sort(), ["w1.sxt", "w400.sxt"]);
});

Deno.test("readTable detects torn and corrupt files and names the path", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "c.sxt");
  const rows = Array.from({ length: 50 }, (_, i) => ({ n: i, s: `row ${i}` }));
  await writeTable(
    path,
    [field("n", scalar("INTEGER")), field("s", scalar("STRING"))],
    batches(rows),
  );
  const good = await Deno.readFile(path);
  const text = new TextDecoder().decode(good);

  const cases: [string, Uint8Array, RegExp][] = [
    ["torn.sxt", good.subarray(0, good.length - 30), /torn|trailer/],
    ["notrailer.sxt", new TextEncoder().encode(text.slice(0, text.lastIndexOf("{"))), /no trailer/],
    ["flipped.sxt", new TextEncoder().encode(text.replace("row 17", "row 71")), /checksum/],
    ["dropped.sxt", new TextEncoder().encode(text.replace('[3,"row 3"]\n', "")), /counts 50 rows/],
    [
      "garbage.sxt",
      new TextEncoder().encode(text.replace('[3,"row 3"]', "[3,")),
      /line 5 is not valid JSON/,
    ],
    ["magic.sxt", new TextEncoder().encode("hello\n"), /bad magic/],
  ];
  for (const [name, bytes, expected] of cases) {
    const p = join(dir, name);
    await Deno.writeFile(p, bytes);
    await assert.rejects(readAll(p), (e: Error) => {
      assert.match(e.message, expected);
      assert.ok(e.message.includes(p), e.message);
      return true;
    });
  }
});

Deno.test("readTable yields batches of about a thousand rows", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "big.sxt");
  const rows = Array.from({ length: 2500 }, (_, i) => ({ n: i }));
  await writeTable(path, [field("n", scalar("INTEGER"))], batches(rows, 700));
  const sizes: number[] = [];
  for await (const b of readTable(hostFiles, path)) sizes.push(b.length);
  assert.deepEqual(sizes, [1000, 1000, 500]);
});

Deno.test("readTable refuses a value its column's type does not hold, and takes mixed data in STRING", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "typed.sxt");
  const ips = [{ a: new IpAddr(4, 0x0a000001), b: [new Timestamp(5)] }, { a: null, b: null }];
  await writeTable(
    path,
    [field("a", scalar("IPADDR")), field("b", arrayOf(scalar("TIMESTAMP")))],
    batches(ips),
  );
  assert.deepEqual(await readAll(path), ips);
  // The header is outside the checksum: a hand-edited one is read as it says.
  const text = await Deno.readTextFile(path);
  const cases: [string, string, RegExp][] = [
    ['"a":"?IPADDR"', '"a":"?INTEGER"', /line 2: column a holds a value that is not INTEGER/],
    ['"a":"?IPADDR"', '"a":"?IPNET"', /line 2: column a holds a value that is not IPNET/],
    ['"b":{"?ARRAY":"TIMESTAMP"}', '"b":{"?ARRAY":"DOUBLE"}', /line 2: column b .* not ARRAY/],
  ];
  for (const [from, to, expected] of cases) {
    assert.ok(text.includes(from), text.slice(0, 200));
    const bad = join(dir, "bad.sxt");
    await Deno.writeTextFile(bad, text.replace(from, to));
    await assert.rejects(readAll(bad), (e: Error) => {
      assert.match(e.message, expected);
      return true;
    });
  }
  // Data of mixed kinds (a JSON field that is a number here, a text there) is stored under STRING
  // (widen()), as the writer stores it, and reads back as it was.
  const mixed = [{ m: 1 }, { m: 2.5 }, { m: "three" }, { m: { x: 1 } }, { m: null }];
  const mixedPath = join(dir, "mixed.sxt");
  await writeTable(mixedPath, [field("m", scalar("STRING"))], batches(mixed));
  assert.deepEqual(await readAll(mixedPath), mixed);
});
