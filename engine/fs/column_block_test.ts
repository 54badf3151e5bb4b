import assert from "node:assert/strict";
import {
  BLOCK_PREFIX_BYTES,
  blockHeader,
  CorruptBlock,
  decodeBlock,
  encodeBlock,
  encodeColumns,
  headerSpan,
} from "./column_block.ts";
import { Interval, IpAddr, type Row, Timestamp } from "../values/values.ts";
import { ColumnSink } from "../pattern/byte_scanner.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import {
  ByteSink,
  compileColumnBytesWriter,
  compileRowBytesWriter,
} from "../render/render_bytes.ts";

const META = {
  lo: 0,
  hi: 100,
  end: 100,
  size: 100,
  mtime: 1,
  identity: "1:2",
  head: 0,
  tail: 0,
  rawBytes: 100,
  lines: 3,
  records: 3,
  unmatched: 0,
  tally: null,
};

function roundTrip(rows: Row[]): Row[] {
  return decodeBlock(encodeBlock(META, rows)).rows();
}

Deno.test("a block gives back its rows: values, nulls, absent fields, key order", () => {
  const rows: Row[] = [];
  for (let i = 0; i < 50; i++) {
    rows.push({
      int: i - 25,
      dbl: i === 3 ? NaN : i === 4 ? -0 : i / 3,
      ts: new Timestamp(1_700_000_000_000 + i),
      word: ["GET", "POST", "PUT"][i % 3]!,
      text: `line ${i} ünïcode ${"x".repeat(i % 5)}`,
      flag: i % 2 === 0,
      ...(i % 7 === 0 ? {} : { sometimes: i % 5 === 0 ? null : `s${i}` }),
      mixed: i % 2 === 0 ? i : `t${i}`,
      ip: new IpAddr(4, 167772160 + i),
      nested: { a: [1, "two", null], b: new Interval(1000) },
      big: i === 1 ? 2 ** 40 : i,
    });
  }
  const back = roundTrip(rows);
  assert.equal(back.length, rows.length);
  for (let i = 0; i < rows.length; i++) {
    assert.deepEqual(Object.keys(back[i]!), Object.keys(rows[i]!));
    assert.deepEqual(back[i], rows[i]);
  }
  assert.ok(Object.is(back[4]!.dbl, -0));
  assert.ok(Number.isNaN(back[3]!.dbl));
  assert.ok(!("sometimes" in back[0]!), "an absent field stays absent");
  assert.equal(back[5]!.sometimes, null);
});

Deno.test("rows whose keys come in other orders are kept whole, in their order", () => {
  const rows: Row[] = [{ a: 1, b: "x" }, { b: "y", a: 2 }, { c: new Timestamp(5) }];
  const back = roundTrip(rows);
  assert.deepEqual(back.map((r) => Object.keys(r)), [["a", "b"], ["b", "a"], ["c"]]);
  assert.deepEqual(back, rows);
  assert.equal(blockHeader(encodeBlock(META, rows)).whole, true);
});

Deno.test("a block's header holds each number and time column's least and greatest value", () => {
  const rows: Row[] = [
    { n: 5, t: new Timestamp(30), s: "a" },
    { n: -2, t: new Timestamp(10), s: "b" },
    { n: null, t: new Timestamp(20), s: "c" },
  ];
  const meta = blockHeader(encodeBlock(META, rows));
  const by = new Map(meta.columns.map((c) => [c.name, c]));
  assert.deepEqual([by.get("n")!.min, by.get("n")!.max], [-2, 5]);
  assert.deepEqual([by.get("t")!.kind, by.get("t")!.min, by.get("t")!.max], ["ts", 10, 30]);
  assert.equal(by.get("s")!.min, undefined);
  assert.equal(meta.rowCount, 3);
});

Deno.test("a changed byte anywhere in a block fails its checksum", () => {
  const bytes = encodeBlock(META, [{ a: 1, b: "text" }, { a: 2, b: "more" }]);
  for (const at of [0, 20, bytes.length >> 1, bytes.length - 5, bytes.length - 1]) {
    const bad = bytes.slice();
    bad[at] = bad[at]! ^ 1;
    assert.throws(() => decodeBlock(bad), CorruptBlock);
  }
  assert.throws(() => decodeBlock(bytes.subarray(0, bytes.length - 8)), CorruptBlock);
  assert.equal(decodeBlock(bytes).rows().length, 2);
});

Deno.test("a block's header is read and checked from its first bytes alone", () => {
  const bytes = encodeBlock(META, [{ n: 1, t: new Timestamp(5) }, { n: 9, t: new Timestamp(7) }]);
  const span = headerSpan(bytes.subarray(0, BLOCK_PREFIX_BYTES));
  assert.ok(span < bytes.length - 8);
  // Only the header's bytes: its statistics, without the body or the file's checksum.
  const meta = blockHeader(bytes.slice(0, span));
  assert.deepEqual(meta.columns.map((c) => [c.name, c.min, c.max]), [["n", 1, 9], ["t", 5, 7]]);
  assert.throws(() => blockHeader(bytes.slice(0, span - 1)), CorruptBlock);
  // A changed byte of the header fails the header's own checksum.
  for (const at of [BLOCK_PREFIX_BYTES, (BLOCK_PREFIX_BYTES + span) >> 1, span - 1]) {
    const bad = bytes.slice(0, span);
    bad[at] = bad[at]! ^ 1;
    assert.throws(() => blockHeader(bad), /header checksum mismatch/);
  }
});

Deno.test("an empty block and a block of only nulls decode", () => {
  assert.deepEqual(roundTrip([]), []);
  assert.deepEqual(roundTrip([{ a: null }, { a: null }]), [{ a: null }, { a: null }]);
});

Deno.test("a block scan filters on a row of the fields the filter reads, and folds into a grouping", () => {
  const rows: Row[] = [];
  for (let i = 0; i < 40; i++) {
    rows.push({
      ip: i % 7 === 0 ? null : new IpAddr(4, 0x0a000000 + (i % 4)),
      status: i % 3 === 0 ? 404 : 200,
      bytes: i % 5 === 0 ? null : i * 10,
      path: `/p/${i}`,
    });
  }
  const block = decodeBlock(encodeBlock(META, rows));
  // The filter is given only `status`; the rows it keeps come whole, in order.
  const seen: Row[] = [];
  const keep = (r: Row) => {
    seen.push(r);
    return r.status === 200;
  };
  const kept = block.scan({ keep, reads: new Set(["status"]) });
  assert.deepEqual(kept, rows.filter((r) => r.status === 200));
  assert.deepEqual(Object.keys(seen[0]!), ["status"]);
  // Rows chosen beforehand (the filter run on the rows the block was made of).
  const select = new Uint8Array(rows.length).map((_, i) => i % 3 === 1 ? 1 : 0);
  assert.deepEqual(block.scan({ select }), rows.filter((_, i) => i % 3 === 1));
  // Folding: groups by ip (IPv4 bits), count(*) and sum(bytes); a row whose group is new, or
  // whose key is null, is handed over as a row, the others folded in place.
  const slots = new Uint32Array(64);
  const groups = new Map<number | null, number>();
  const counts = new Float64Array(8);
  const sums = new Float64Array(8);
  const flags = new Uint8Array(8);
  const added: Row[] = [];
  const fold = {
    key: "ip",
    folds: [{ kind: "count" as const, field: null }, { kind: "sum" as const, field: "bytes" }],
    add(row: Row) {
      added.push(row);
      const key = row.ip === null ? null : (row.ip as IpAddr).bits as number;
      let g = groups.get(key);
      if (g === undefined) {
        g = groups.size;
        groups.set(key, g);
        if (key !== null) {
          let at = (Math.imul(key, 0x9e3779b1) >>> 27) << 1;
          while (slots[at + 1] !== 0) at = (at + 2) & 62;
          slots[at] = key;
          slots[at + 1] = g + 1;
        }
      }
      counts[g]!++;
      if (typeof row.bytes === "number") {
        sums[g]! += row.bytes;
        flags[g]! |= 1;
      }
    },
    ipv4: () => ({ slots, shift: 27 }),
    smallInts: () => null,
    values: (i: number) => (i === 0 ? counts : sums),
    flags: (_i: number) => flags,
  };
  assert.deepEqual(block.scan({ keep, reads: new Set(["status"]), fold }), []);
  const want = new Map<number | null, { n: number; sum: number }>();
  for (const r of rows.filter((r) => r.status === 200)) {
    const key = r.ip === null ? null : (r.ip as IpAddr).bits as number;
    const w = want.get(key) ?? { n: 0, sum: 0 };
    w.n++;
    w.sum += (r.bytes as number | null) ?? 0;
    want.set(key, w);
  }
  for (const [key, w] of want) {
    const g = groups.get(key)!;
    assert.deepEqual([counts[g], sums[g]], [w.n, w.sum], `group ${key}`);
  }
  // Only new groups' first rows and null keys came as rows.
  const nulls = rows.filter((r) => r.status === 200 && r.ip === null).length;
  assert.equal(added.length, [...want.keys()].filter((k) => k !== null).length + nulls);
});

Deno.test("tuples of one shape are stored a column per member; others, whole values", () => {
  const rows: Row[] = [];
  for (let i = 0; i < 30; i++) {
    rows.push({
      status: i % 6 === 0 ? null : { errorCode: i % 4, reason: i % 5 === 0 ? null : `r${i % 3}` },
      loc: { city: `c${i}`, geo: { lat: i / 7, at: new Timestamp(i) } },
      odd: i % 2 === 0 ? { a: 1 } : { b: 2 },
    });
  }
  const bytes = encodeBlock(META, rows);
  const meta = blockHeader(bytes);
  const by = new Map(meta.columns.map((c) => [c.name, c]));
  assert.equal(by.get("status")!.kind, "tuple");
  assert.deepEqual(by.get("status")!.members!.map((m) => [m.name, m.kind]), [
    ["errorCode", "i32"],
    ["reason", "dict"],
  ]);
  assert.equal(by.get("loc")!.members![1]!.kind, "tuple");
  assert.equal(by.get("odd")!.kind, "json");
  const back = decodeBlock(bytes).rows();
  assert.deepEqual(back, rows);
  for (let i = 0; i < rows.length; i++) {
    if (rows[i]!.status !== null) {
      assert.deepEqual(Object.keys(back[i]!.status as object), ["errorCode", "reason"]);
    }
  }
});

Deno.test("a block tests comparisons on its columns; the filter decides the rest", () => {
  const rows: Row[] = [];
  for (let i = 0; i < 60; i++) {
    rows.push({
      n: i % 11 === 0 ? null : i,
      t: new Timestamp(1000 * i),
      m: i % 2 === 0 ? i : `s${i}`, // mixed: not a column of numbers
    });
  }
  const block = decodeBlock(encodeBlock(META, rows));
  const n = (op: "<" | ">=" | "=", value: number) => ({
    field: "n",
    op,
    value,
    kind: "num" as const,
  });
  const t = (op: "<" | ">=", value: number) => ({ field: "t", op, value, kind: "ts" as const });
  const calls: Row[] = [];
  const never = (r: Row) => {
    calls.push(r);
    return false;
  };
  // Exact: the filter is not called; null is not true.
  const both = { and: [n(">=", 20), t("<", 40_000)] as const };
  assert.deepEqual(
    block.scan({ keep: never, test: { test: both, exact: true } }),
    rows.filter((r) => r.n !== null && (r.n as number) >= 20 && (r.t as Timestamp).ms < 40_000),
  );
  assert.equal(calls.length, 0);
  const either = { or: [n("=", 5), t(">=", 58_000)] as const };
  assert.deepEqual(
    block.scan({ test: { test: either, exact: true } }).map((r) => r.t),
    [5, 58, 59].map((i) => new Timestamp(1000 * i)),
  );
  // Not exact: the rows the comparisons pass go on to the filter.
  block.scan({ keep: never, test: { test: n("<", 10), exact: false } });
  assert.equal(calls.length, 9); // 1..9 (0 is null)
  // A field no row has is null: no row passes; mixed values leave it all to the filter.
  const none = { field: "zz", op: "=" as const, value: 1, kind: "num" as const };
  assert.deepEqual(block.scan({ test: { test: none, exact: true } }), []);
  calls.length = 0;
  const mixed = { field: "m", op: "<" as const, value: 10, kind: "num" as const };
  block.scan({ keep: never, test: { test: mixed, exact: true } });
  assert.equal(calls.length, rows.length);
});

Deno.test("columns given by a reader encode as the rows would: IPv4 bits, nulls, absent, IPv6", () => {
  const names = ["ip", "n", "s"];
  const rows: Row[] = [];
  const sink = { cols: [[], [], []] as unknown[][], ipv4: [true, false, false] };
  for (let i = 0; i < 40; i++) {
    const ip = i % 9 === 0 ? null : new IpAddr(4, 0x0a000000 + i);
    const row: Row = { ip, n: i % 7 === 0 ? null : i * 3 };
    if (i % 5 !== 0) row.s = `w${i % 4}`;
    rows.push(row);
    sink.cols[0]!.push(ip === null ? null : ip.bits);
    sink.cols[1]!.push(row.n);
    sink.cols[2]!.push(i % 5 !== 0 ? row.s : undefined);
  }
  const bytes = encodeColumns(META, names, sink);
  assert.deepEqual(decodeBlock(bytes).rows(), rows);
  assert.deepEqual(
    blockHeader(bytes).columns.map((c) => c.kind),
    blockHeader(encodeBlock(META, rows)).columns.map((c) => c.kind),
  );
  // An IPv6 address among the bits: the column is encoded as the values would be.
  const v6 = new IpAddr(6, 1n);
  sink.cols[0]![3] = v6;
  rows[3]!.ip = v6;
  assert.deepEqual(decodeBlock(encodeColumns(META, names, sink)).rows(), rows);
});

Deno.test("columns given in typed vectors encode as the rows would: i32, f64, -0, IPv4 bits, nulls, absent", () => {
  const names = ["ip", "n", "f", "z", "none"];
  const n = 30;
  const cap = 32; // vectors longer than the records: only the first n count
  const vecs = [new Uint32Array(cap), new Float64Array(cap), new Float64Array(cap)] as (
    | Float64Array
    | Uint32Array
    | null
  )[];
  const tags = names.map(() => new Uint8Array(cap));
  vecs.push(new Float64Array(cap), new Float64Array(cap));
  const rows: Row[] = [];
  for (let i = 0; i < n; i++) {
    const row: Row = {};
    if (i % 7 === 0) tags[0]![i] = 1, row.ip = null;
    else vecs[0]![i] = 0x0a000000 + i, row.ip = new IpAddr(4, 0x0a000000 + i);
    if (i % 5 === 1) tags[1]![i] = 2; // absent
    else vecs[1]![i] = i * 3, row.n = i * 3;
    vecs[2]![i] = i + 0.5;
    row.f = i + 0.5;
    // One -0 among integers: the column is f64, as from the rows, and keeps the sign.
    vecs[3]![i] = i === 4 ? -0 : i;
    row.z = i === 4 ? -0 : i;
    tags[4]![i] = 1;
    row.none = null;
    rows.push(row);
  }
  const sink = {
    cols: names.map(() => []),
    ipv4: [true, false, false, false, false],
    vecs,
    tags,
    n,
  };
  const bytes = encodeColumns(META, names, sink);
  const back = decodeBlock(bytes).rows();
  assert.deepEqual(back, rows);
  assert.ok(Object.is(back[4]!.z, -0));
  const kinds = (b: Uint8Array) => blockHeader(b).columns.map((c) => [c.kind, c.min, c.max]);
  assert.deepEqual(kinds(bytes), kinds(encodeBlock(META, rows)));
});

Deno.test("one sink reset and filled again for each block gives each block's own rows: stale values, tags and spilled fields never carry over", () => {
  // The cache's fill (engine/exec/cached_scan.ts) keeps one sink for a file's blocks.
  const pattern = `IPADDR:ip ' ' INT:n? ' ' LONG:big ' ' HTTPDATE:t? ' ' NSPACE:w`;
  const compiled = compilePattern(pattern, { timeZone: "UTC" });
  if (!compiled.ok) throw new Error(compiled.message);
  const scanned = compiled.pattern;
  const names = ["ip", "n", "big", "t", "w"];
  const line = (i: number, block: number) => {
    // Block 0 has values where block 1 has nulls ("-"), and the other way round; its `big`
    // spills into a list (more than 15 digits), block 1's fits a vector again.
    const gap = (i + block) % 2 === 0;
    const big = block === 0 && i === 3 ? "12345678901234567890" : String(i * 1000 + block);
    const at = `${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${
      String(i % 60).padStart(2, "0")
    }`;
    const time = gap ? "-" : `10/Oct/2024:13:${at} +0000`;
    return `10.${block}.${i >> 8}.${i & 255} ${
      gap ? "-" : i + 7 * block
    } ${big} ${time} w${i}${block}`;
  };
  const shared = new ColumnSink(names.length);
  for (let block = 0; block < 3; block++) {
    const text = new TextEncoder().encode(
      Array.from({ length: 2000 + block * 1500 }, (_, i) => line(i, block)).join("\n") + "\n",
    );
    const blocks: Uint8Array[] = [shared, new ColumnSink(names.length)].map((sink) => {
      if (sink === shared) sink.reset();
      const scanner = scanned.makeByteScanner(names, undefined, undefined, sink);
      assert.ok(scanner);
      for (let i = 0; i < text.length; i = scanner.next) {
        assert.equal(scanner.scan(text, i), null);
      }
      return encodeColumns(META, names, sink);
    });
    // The same bytes (where a value is null, zero in its vector, as in a fresh one).
    const [a, b] = blocks as [Uint8Array, Uint8Array];
    const differ = a.findIndex((x, i) => x !== b[i]);
    assert.ok(a.length === b.length && differ < 0, `block ${block}: bytes differ at ${differ}`);
    const rows = decodeBlock(blocks[0]!).rows();
    const extractor = scanned.makeExtractor(names);
    assert.deepEqual(rows.slice(0, 5), [0, 1, 2, 3, 4].map((i) => extractor(line(i, block))));
  }
});

/** The bytes of a block's rows written from its columns, and of the same rows as rows. */
function writtenBoth(
  block: ReturnType<typeof decodeBlock>,
  fields: readonly string[],
  picks: Int32Array | "all",
): { columns: string; rows: string } {
  const opts = { timeZone: "UTC" };
  const decoder = new TextDecoder();
  const all = block.rows();
  const chosen = picks === "all" ? all : [...picks].map((i) => all[i]!);
  const rowSink = new ByteSink();
  compileRowBytesWriter("json", fields, opts)(chosen, rowSink, []);
  const sink = new ByteSink();
  const vectors = block.vectors(fields);
  assert.ok(vectors !== null);
  const list = picks === "all" ? null : picks;
  const write = compileColumnBytesWriter("json", fields, opts, sink, [], fields.map(() => false))
    .block(vectors);
  write(list, 0, chosen.length);
  return {
    columns: decoder.decode(sink.bytes.subarray(0, sink.at)),
    rows: decoder.decode(rowSink.bytes.subarray(0, rowSink.at)),
  };
}

Deno.test("a block's columns as vectors write the bytes its rows write, every kind of column", () => {
  const rows: Row[] = [];
  for (let i = 0; i < 300; i++) {
    rows.push({
      int: i % 7 === 0 ? null : i - 150,
      dbl: i === 3 ? NaN : i / 3,
      t: new Timestamp(1_700_000_000_000 + 250 * i),
      ip: i % 5 === 0 ? null : new IpAddr(4, 0x0a000000 + i),
      b: i % 2 === 0,
      // Many distinct texts (a str column) and few (a dict column).
      s: `line "${i}"\t${"é".repeat(i % 3)}`,
      d: ["GET", "POST", null][i % 3]!,
      iv: new Interval(i),
      ...(i % 4 === 0 ? {} : { sometimes: i }),
    });
  }
  const block = decodeBlock(encodeBlock(META, rows));
  const kinds = Object.fromEntries(block.meta.columns.map((c) => [c.name, c.kind]));
  assert.equal(kinds.s, "str");
  assert.equal(kinds.d, "dict");
  const fields = ["int", "dbl", "t", "ip", "b", "s", "d", "iv", "sometimes", "none"];
  const both = writtenBoth(block, fields, "all");
  assert.equal(both.columns, both.rows);
  const some = writtenBoth(block, ["s", "t"], Int32Array.from([299, 0, 7, 7]));
  assert.equal(some.columns, some.rows);
  // Tuples are given as rows only.
  const tuples = decodeBlock(encodeBlock(META, [{ a: { x: 1 } }, { a: { x: 2 } }]));
  assert.equal(tuples.vectors(["a"]), null);
});

Deno.test("a block picks the rows its scan keeps without making them; a filter of absent fields needs rows", () => {
  const rows: Row[] = [];
  for (let i = 0; i < 80; i++) {
    rows.push({
      n: i % 9 === 0 ? null : i,
      t: new Timestamp(1000 * i),
      ...(i % 3 ? { a: i } : {}),
    });
  }
  const block = decodeBlock(encodeBlock(META, rows));
  const picked = (scan: Parameters<typeof block.picks>[0]) => {
    const p = block.picks(scan);
    assert.ok(p !== null && p !== "all");
    return [...p];
  };
  // Each row's time is its own: the index of a kept row.
  const indexOf = (kept: Row[]) => kept.map((r) => (r.t as Timestamp).ms / 1000);
  assert.equal(block.picks({}), "all");
  const test = { field: "n", op: ">=" as const, value: 40, kind: "num" as const };
  const exact = { test: { test, exact: true } };
  assert.deepEqual(picked(exact), indexOf(block.scan(exact)));
  assert.equal(picked(exact).length, 40 - 4); // 40..79 but 45, 54, 63, 72
  const keep = (r: Row) => (r.n as number) % 2 === 0;
  const partial = { keep, reads: new Set(["n"]) };
  assert.deepEqual(picked(partial), indexOf(block.scan(partial)));
  const select = new Uint8Array(80).map((_, i) => i % 10 === 1 ? 1 : 0);
  assert.deepEqual(picked({ select }), [1, 11, 21, 31, 41, 51, 61, 71]);
  // `a` is absent from some rows: the filter is given whole rows, which picks does not make.
  assert.equal(block.picks({ keep: (r) => r.a !== undefined, reads: new Set(["a"]) }), null);
});
