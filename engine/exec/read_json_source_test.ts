import assert from "node:assert/strict";
import { join } from "node:path";
import { MAX_JSON_DEPTH, readJsonSource } from "./read_json_source.ts";
import { engineHome } from "../../tests/support/engine_home.ts";
import { hostEntry, testContext } from "../../tests/support/temp_tree.ts";
import type { FileEntry } from "../contracts/datastore.ts";
import type { Row } from "../values/values.ts";
import { pooledScanners, setScannerPath, takeScanner } from "../simd/scanner.ts";

async function withFiles(contents: string[], fn: (files: FileEntry[]) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "trawl-json-" });
  try {
    const files: FileEntry[] = [];
    for (const [i, c] of contents.entries()) {
      const path = join(dir, `f${i}.json`);
      await Deno.writeTextFile(path, c);
      files.push(await hostEntry(path));
    }
    await fn(files);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function rows(
  files: FileEntry[],
  needed: string[] | null,
  ctx = testContext(),
): Promise<Row[]> {
  const out: Row[] = [];
  for await (const batch of readJsonSource(files, needed, ctx)) out.push(...batch);
  return out;
}

Deno.test("readJsonSource() reads JSON lines, one row per object, values JSON-native", async () => {
  const text = '{"a":1,"b":"x","t":{"k":[1,2]}}\n\n{"a":2.5,"b":null,"ok":true}\r\n';
  await withFiles([text], async (files) => {
    assert.deepEqual(await rows(files, null), [
      { a: 1, b: "x", t: { k: [1, 2] } },
      { a: 2.5, b: null, ok: true },
    ]);
  });
});

Deno.test("readJsonSource() keeps only the needed fields, null when absent", async () => {
  await withFiles(['{"a":1,"b":2,"c":3}\n{"b":4}\n'], async (files) => {
    assert.deepEqual(await rows(files, ["b", "a", "constructor"]), [
      { b: 2, a: 1, constructor: null },
      { b: 4, a: null, constructor: null },
    ]);
  });
});

Deno.test("readJsonSource() reads a file that is one JSON array", async () => {
  const text = ' [ {"a": "x,]}"}, {"a": [1, {"b": 2}]},\n {"a": "q\\"}"} ]\n';
  await withFiles([text], async (files) => {
    const ctx = testContext();
    assert.deepEqual(await rows(files, null, ctx), [
      { a: "x,]}" },
      { a: [1, { b: 2 }] },
      { a: 'q"}' },
    ]);
    assert.deepEqual(ctx.warnings, []);
  });
});

Deno.test("readJsonSource() streams an array larger than a chunk", async () => {
  const objects = Array.from({ length: 30_000 }, (_, i) => ({ i, pad: "p".repeat(60) }));
  await withFiles([JSON.stringify(objects)], async (files) => {
    assert.ok(files[0]!.size > 2 * (1 << 20));
    const got = await rows(files, ["i"]);
    assert.equal(got.length, objects.length);
    assert.deepEqual(got[29_999], { i: 29_999 });
    assert.ok(got.every((r, i) => r.i === i));
  });
});

Deno.test("readJsonSource() skips what is not an object with one warning per source", async () => {
  await withFiles(['{"a":1}\n[1]\nnot json\n{"a":2}\n', '{"a":3}\n42\n'], async (files) => {
    const ctx = testContext();
    assert.deepEqual(await rows(files, ["a"], ctx), [{ a: 1 }, { a: 2 }, { a: 3 }]);
    assert.equal(ctx.warnings.length, 1);
    assert.match(ctx.warnings[0]!.message, /skipped 3 records .*line 2 of '.*f0\.json'/);
  });
});

Deno.test("readJsonSource() yields batches and reports progress over all files", async () => {
  const text = '{"n":1}\n'.repeat(5000);
  await withFiles([text, text], async (files) => {
    const ctx = testContext();
    const sizes: number[] = [];
    for await (const batch of readJsonSource(files, null, ctx)) sizes.push(batch.length);
    assert.equal(sizes.reduce((a, b) => a + b, 0), 10_000);
    assert.ok(sizes.length >= 2);
    assert.ok(ctx.progress.fraction > 0.99);
  });
});

Deno.test("a record nested 2000 levels deep is skipped with a warning naming file and line", async () => {
  await using home = await engineHome();
  const deep = "[".repeat(2000) + "]".repeat(2000);
  const deepString = `"${"[".repeat(3000)}"`; // brackets in a string are no nesting
  const atLimit = '{"a":'.repeat(MAX_JSON_DEPTH - 1) + "1" + "}".repeat(MAX_JSON_DEPTH - 1);
  await home.write(
    "/shared/deep.json",
    `{"a": 1}\n{"a": ${deep}}\n{"a": ${deepString}}\n{"a": ${atLimit}}\n{"a": 3}\n`,
  );
  for (
    const text of [
      `READ_JSON(src: '/shared/deep.json')`,
      `READ_JSON(src: '/shared/deep.json') | select(a)`,
    ]
  ) {
    const { rows, warnings, schema } = await home.run(text);
    assert.equal(rows.length, 4, text);
    assert.equal(rows[3]!.a, 3);
    assert.ok(schema.length > 0);
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!.message,
      /skipped 1 record nested more than 128 levels deep \(the first: line 2 of '\/shared\/deep\.json'\)/,
    );
  }
});

Deno.test("READ_JSON over a host file of many read chunks gives every record whole (its read buffers freed behind it)", async () => {
  await using home = await engineHome();
  const lines = Array.from(
    { length: 60_000 },
    (_, i) =>
      JSON.stringify({
        i,
        name: `n${i % 977}`,
        long: `${"x".repeat(i % 50)}-${i}`,
        deep: { k: i % 7 },
      }),
  );
  const text = lines.join("\n") + "\n"; // about 4.6 MB: five 1 MiB reads, lines cut across them
  await Deno.writeTextFile(home.tree.resolve(home.user, "/user/big.json").real, text);
  const { rows } = await home.run(
    "READ_JSON(src: '/user/big.json') | select(i, name, long, deep.k as k)",
  );
  assert.equal(rows.length, lines.length);
  for (let i = 0; i < rows.length; i += 1) {
    const want = JSON.parse(lines[i]!);
    const got = rows[i]!;
    if (
      got.i !== want.i || got.name !== want.name || got.long !== want.long || got.k !== want.deep.k
    ) {
      assert.fail(`record ${i}: ${JSON.stringify(got)} is not ${lines[i]}`);
    }
  }
});

Deno.test("readJsonSource() reads objects written across lines, larger than a chunk, and an unterminated one is skipped", async () => {
  // Pretty-printed objects (a lone `{` on the first line): 3000 of about 150 bytes, read in pieces
  // of about 96 KiB, many cut inside an object or a string.
  const objects = Array.from({ length: 3000 }, (_, i) => ({
    i,
    text: `a } { [ ] "quoted" \\ ${"x".repeat(i % 50)}`,
    nested: { list: [i, { deep: [] }] },
  }));
  const text = objects.map((o) => JSON.stringify(o, null, 2)).join("\n") + '\n{\n  "cut": ';
  await withFiles([text], async (files) => {
    const ctx = testContext();
    assert.deepEqual(await rows(files, null, ctx), objects);
    assert.equal(ctx.warnings.length, 1, JSON.stringify(ctx.warnings));
    assert.match(ctx.warnings[0]!.message, /the unterminated object 3001/);
  });
  // A file of JSON lines whose first object is on its first line stays JSON lines.
  await withFiles(['{"a":1}\n{"a":2}\n'], async (files) => {
    assert.deepEqual(await rows(files, null), [{ a: 1 }, { a: 2 }]);
  });
});

Deno.test("readJsonSource() across lines: an escaped quote stays inside its string, braces in strings do not count", async () => {
  const objects = [
    { a: 'say "}" here', b: 1 },
    { a: "ends in a backslash \\", b: 2 },
    { a: '\\"{"', b: 3, c: ["]", '"[', { d: "}}" }] },
    { a: "", b: 4 },
  ];
  const text = objects.map((o) => JSON.stringify(o, null, 2)).join("\n") + "\n";
  assert.ok(text.includes('\\"}\\"'));
  await withFiles([text], async (files) => {
    const ctx = testContext();
    assert.deepEqual(await rows(files, null, ctx), objects);
    assert.deepEqual(ctx.warnings, []);
  });
  // The same objects as JSON lines and as one array.
  await withFiles([
    objects.map((o) => JSON.stringify(o)).join("\n") + "\n",
    JSON.stringify(objects, null, 1),
  ], async (files) => {
    assert.deepEqual(await rows(files, null), [...objects, ...objects]);
  });
});

Deno.test("readJsonSource() picks own fields only: one named like Object's members is null when absent, its value when present", async () => {
  const text = [
    '{"x":0,"y":false,"z":""}',
    '{"constructor":5,"toString":"s","hasOwnProperty":null,"__proto__":{"p":1}}',
    "{}",
  ].join("\n") + "\n";
  const needed = [
    "x",
    "y",
    "z",
    "constructor",
    "toString",
    "hasOwnProperty",
    "valueOf",
    "__proto__",
  ];
  await withFiles([text], async (files) => {
    const got = await rows(files, needed);
    assert.deepEqual(got[0], {
      x: 0,
      y: false,
      z: "",
      constructor: null,
      toString: null,
      hasOwnProperty: null,
      valueOf: null,
      ["__proto__"]: null,
    });
    assert.equal(got[1]!.constructor, 5);
    assert.equal(got[1]!.toString, "s");
    assert.equal(got[1]!.hasOwnProperty, null);
    assert.equal(got[1]!.valueOf, null);
    for (const name of needed) {
      assert.ok(Object.hasOwn(got[2]!, name), name);
      assert.equal(got[2]![name], null, name);
    }
  });
});

Deno.test("readJsonSource() with line and raw fields: the line each record starts on and its text, in files read in many pieces", async () => {
  const extra = { line: "_line", raw: "_raw" };
  const read = async (files: FileEntry[], needed: string[] | null) => {
    const out: Row[] = [];
    for await (
      const b of readJsonSource(files, needed, testContext(), undefined, undefined, extra)
    ) {
      out.push(...b);
    }
    return out;
  };
  // Pretty-printed, as `JSON.stringify(o, null, 2)` and the Entra ID portal write them: an array
  // of 12000 objects over 8 lines each (1 MiB and more, cut inside objects), after 2 blank
  // lines; and the same objects written one after another across lines.
  const objects = Array.from({ length: 12_000 }, (_, i) => ({
    i,
    text: `a } { [ ] "q" ${"x".repeat(i % 40)}`,
    nested: { list: [i] },
  }));
  const pretty = objects.map((o) => JSON.stringify(o, null, 2));
  const lines = (s: string) => s.split("\n").length;
  const starts: number[] = [];
  let at = 4; // blank, blank, "[", then the first object
  for (const p of pretty) {
    starts.push(at);
    at += lines(p);
  }
  const array = "\n\n[\n" + pretty.join(",\n") + "\n]\n";
  await withFiles([array], async (files) => {
    assert.ok(files[0]!.size > 1 << 20);
    const got = await read(files, null);
    assert.equal(got.length, objects.length);
    for (const [k, r] of got.entries()) {
      assert.equal(r._line, starts[k], `element ${k}`);
      assert.equal(r._raw, pretty[k]);
      assert.equal(r.i, k);
    }
  });
  const across = pretty.join("\n") + "\n";
  await withFiles([across], async (files) => {
    const got = await read(files, ["i"]);
    assert.deepEqual(got.map((r) => r._line), starts.map((s) => s - 3));
    assert.deepEqual(got.map((r) => r.i), objects.map((o) => o.i));
  });
  // JSON lines, CRLF and blank lines counted; a data field of the same name is replaced.
  await withFiles(['{"a":1,"_line":"mine"}\r\n\r\nnot json\n{"a":2}'], async (files) => {
    for (const needed of [null, ["a", "_line", "_raw"]]) {
      assert.deepEqual(await read(files, needed), [
        { a: 1, _line: 1, _raw: '{"a":1,"_line":"mine"}' },
        { a: 2, _line: 4, _raw: '{"a":2}' },
      ]);
    }
  });
});

Deno.test("READ_JSON gives its reader's scanner back to the thread's pool when the source is read, and when it is stopped early", async () => {
  const lines =
    Array.from({ length: 3000 }, (_, i) => JSON.stringify({ s: { e: i }, pad: "x".repeat(40) }))
      .join("\n") + "\n";
  await withFiles([lines], async (files) => {
    try {
      setScannerPath("wasm");
      // An empty pool: the reader's scanner is then the only one that can come back.
      while (pooledScanners() > 0) takeScanner();
      assert.equal((await rows(files, ["s"])).length, 3000);
      assert.equal(pooledScanners(), 1, "given back once read whole");
      takeScanner();
      for await (const batch of readJsonSource(files, ["s"], testContext())) {
        assert.ok(batch.length > 0);
        break; // the consumer stops: the generator is returned early
      }
      assert.equal(pooledScanners(), 1, "given back when stopped early");
    } finally {
      setScannerPath(undefined);
    }
  });
});
