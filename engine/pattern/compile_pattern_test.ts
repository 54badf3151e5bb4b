import assert from "node:assert/strict";
import { IpAddr, type Row, Timestamp } from "../values/values.ts";
import { type CompiledPattern, compilePattern } from "./compile_pattern.ts";

function compile(text: string, timeZone = "UTC"): CompiledPattern {
  const r = compilePattern(text, { timeZone });
  if (!r.ok) throw new Error(`${r.message} at ${r.offset}`);
  return r.pattern;
}

/** The rows of every line of `text`, with all fields. */
function parseAll(
  pattern: string,
  text: string,
): { rows: Row[]; matched: number; skipped: number } {
  const rows: Row[] = [];
  const counts = compile(pattern).extractAll(text, 0, text.length, (r) => rows.push(r));
  return { rows, ...counts };
}

function one(pattern: string, line: string): Row | null {
  const p = compile(pattern);
  return p.makeExtractor(p.fields.map((f) => f.name))(line);
}

Deno.test("compilePattern() parses a combined access log line into typed fields", () => {
  const p = `IPV4:client ' - ' NSPACE:user ' [' HTTPDATE:time '] "' WORD:method ' '
    NSPACE:path ' ' NSPACE:proto '" ' INT:status ' ' INT?:bytes LD EOL`;
  const { rows, matched, skipped } = parseAll(
    p,
    '10.0.0.1 - bob [10/Oct/2024:13:55:36 +0200] "GET /a?b=1 HTTP/1.1" 200 512 "-" "curl"\n' +
      '10.0.0.2 - - [10/Oct/2024:13:55:37 +0000] "POST /b HTTP/1.1" 404 - "-" "x"\n',
  );
  assert.equal(matched, 2);
  assert.equal(skipped, 0);
  assert.deepEqual(rows[0], {
    client: new IpAddr(4, 0x0a000001),
    user: "bob",
    time: new Timestamp(Date.UTC(2024, 9, 10, 11, 55, 36)),
    method: "GET",
    path: "/a?b=1",
    proto: "HTTP/1.1",
    status: 200,
    bytes: 512,
  });
  assert.equal(rows[1]!.bytes, null);
  assert.deepEqual(compile(p).fields.map((f) => [f.name, f.type.kind]), [
    ["client", "IPADDR"],
    ["user", "STRING"],
    ["time", "TIMESTAMP"],
    ["method", "STRING"],
    ["path", "STRING"],
    ["proto", "STRING"],
    ["status", "INTEGER"],
    ["bytes", "INTEGER"],
  ]);
});

Deno.test("every matcher matches its text and gives a value of its type", () => {
  const cases: [string, string, unknown][] = [
    ["INT:v", "-42", -42],
    ["INT:v", "99999999999", null], // out of 32 bits: matched, but no INTEGER
    ["LONG:v", "9007199254740993", null],
    ["LONG:v", "+9007199254740991", 9007199254740991],
    ["DOUBLE:v", "-1.5e3", -1500],
    ["DOUBLE:v", ".25", 0.25],
    ["BOOL:v", "TRUE", true],
    ["BOOL:v", "false", false],
    ["WORD:v", "abc_9-x", "abc_9"],
    ["NSPACE:v", "a-b/c d", "a-b/c"],
    ["DQS:v", '"say \\"hi\\"" rest', 'say "hi"'],
    ["IPV4:v", "192.168.1.20", new IpAddr(4, 0xc0a80114)],
    ["IPV4:v", "256.1.1.1", null], // the shape of an address, but not one
    ["IPV6:v", "2001:db8::1", new IpAddr(6, (0x20010db8n << 96n) | 1n)],
    ["IPADDR:v", "::ffff:1.2.3.4", new IpAddr(6, (0xffffn << 32n) | 0x01020304n)],
    ["IPADDR:v", "8.8.4.4", new IpAddr(4, 0x08080404)],
    ["HTTPDATE:v", "01/Feb/2024:00:00:01 -0100", new Timestamp(Date.UTC(2024, 1, 1, 1, 0, 1))],
    ["ISO8601:v", "2024-05-01T13:00:00.250Z", new Timestamp(Date.UTC(2024, 4, 1, 13, 0, 0, 250))],
    ["ISO8601:v", "2024-05-01 13:00:00 +0200", new Timestamp(Date.UTC(2024, 4, 1, 11))],
    [
      "TIMESTAMP('yyyy-MM-dd HH:mm:ss.SSS'):v",
      "2024-05-01 13:00:00.007 tail",
      new Timestamp(Date.UTC(2024, 4, 1, 13, 0, 0, 7)),
    ],
    ["TIMESTAMP('dd/MMM/yyyy'):v", "05/Mar/2023", new Timestamp(Date.UTC(2023, 2, 5))],
    ["JSON:v", '{"a": [1, {"b": "}"}], "c": null} tail', { a: [1, { b: "}" }], c: null }],
    ["JSON:v", "[1, 2]", [1, 2]],
    ["KVP:v", 'user=ann action="log in" n=3', { user: "ann", action: "log in", n: "3" }],
    ["SPACE:v", " \t x", " \t "],
    ["REGEX('[a-f]+'):v", "cafe!", "cafe"],
    ["'<' LD:v '>'", "<a b c>", "a b c"],
  ];
  for (const [pattern, line, expected] of cases) {
    const row = one(pattern, line);
    assert.ok(row, `${pattern} matches ${line}`);
    assert.deepEqual(row.v, expected, `${pattern} on ${line}`);
  }
});

Deno.test("matchers refuse text that is not theirs", () => {
  const cases: [string, string][] = [
    ["INT", "x1"],
    ["DOUBLE", "abc"],
    ["BOOL", "yes"],
    ["WORD", "-"],
    ["DQS", "unquoted"],
    ["IPV4", "1.2.3"],
    ["IPV6", "1.2.3.4"],
    ["HTTPDATE", "2024-05-01"],
    ["ISO8601", "10/Oct/2024"],
    ["TIMESTAMP('yyyy-MM-dd')", "2024/05/01"],
    ["JSON", "{unbalanced"],
    ["KVP", "no pairs here"],
    ["SPACE", "x"],
    ["'abc'", "abd"],
  ];
  for (const [pattern, line] of cases) {
    assert.equal(one(pattern, line), null, `${pattern} on ${line}`);
  }
});

Deno.test("a choice takes the alternative that matches, and one name may appear in several", () => {
  const p = "WORD:k ' ' (INT:n | '-' | 'n=' INT:n) EOL";
  assert.deepEqual(one(p, "a 5"), { k: "a", n: 5 });
  assert.deepEqual(one(p, "b -"), { k: "b", n: null });
  assert.deepEqual(one(p, "c n=7"), { k: "c", n: 7 });
  assert.equal(one(p, "d x"), null);
  assert.equal(compile(p).fields[1]!.nullable, true);
});

Deno.test("an optional element may be absent, and an optional matcher takes '-' as absent", () => {
  assert.deepEqual(one("REGEX('[a-z]+'):a ' '? INT?:b EOL", "x12"), { a: "x", b: 12 });
  assert.deepEqual(one("REGEX('[a-z]+'):a ' '? INT?:b EOL", "x 12"), { a: "x", b: 12 });
  assert.deepEqual(one("REGEX('[a-z]+'):a ' '? INT?:b EOL", "x"), { a: "x", b: null });
  assert.deepEqual(one("WORD:a ' ' INT?:b ' ' WORD:c", "x - y"), { a: "x", b: null, c: "y" });
  assert.deepEqual(one("WORD:a ' ' INT?:b ' ' WORD:c", "x  y"), { a: "x", b: null, c: "y" });
  assert.deepEqual(one("WORD:a (' #' INT:n)? EOL", "x #3"), { a: "x", n: 3 });
  assert.deepEqual(one("WORD:a (' #' INT:n)? EOL", "x"), { a: "x", n: null });
  const fields = compile("WORD:a LONG?:b").fields;
  assert.deepEqual(fields.map((f) => f.nullable), [false, true]);
});

Deno.test("an optional field is nullable in the schema even when every line has it", () => {
  for (const matcher of ["WORD", "NSPACE", "DQS", "IPV4", "IPADDR", "HTTPDATE"]) {
    const pattern = `WORD:a ' ' ${matcher}?:w`;
    assert.deepEqual(
      compile(pattern).fields.map((f) => [f.name, f.nullable]),
      [["a", false], ["w", true]],
      pattern,
    );
  }
  const { rows } = parseAll("WORD:a ' ' WORD?:w", "x y\nx z\n");
  assert.deepEqual(rows, [{ a: "x", w: "y" }, { a: "x", w: "z" }]);
  assert.deepEqual(compile("WORD:a ' ' WORD:w").fields.map((f) => f.nullable), [false, false]);
});

Deno.test("an optional signed number followed directly by a matcher keeps its sign: -5abc", () => {
  assert.deepEqual(one("INT?:n WORD:w", "-5abc"), { n: -5, w: "abc" });
  assert.deepEqual(one("INT?:n WORD:w", "+5abc"), { n: 5, w: "abc" });
  assert.deepEqual(one("LONG?:n WORD:w", "-5abc"), { n: -5, w: "abc" });
  assert.deepEqual(one("INT?:n WORD:w", "abc"), { n: null, w: "abc" });
  // A lone dash is absent; the word follows it.
  assert.deepEqual(one("INT?:n ' ' WORD:w", "- abc"), { n: null, w: "abc" });
});

Deno.test("white space in a pattern separates elements and matches nothing", () => {
  assert.deepEqual(one("WORD:a   '-'\n\t WORD:b", "x-y"), { a: "x", b: "y" });
  assert.equal(one("WORD:a '-' WORD:b", "x - y"), null);
});

Deno.test("EOL at the end demands the end of the line; without it the rest is ignored", () => {
  assert.equal(one("WORD:a EOL", "abc def"), null);
  assert.deepEqual(one("WORD:a", "abc def"), { a: "abc" });
  const { rows } = parseAll("WORD:a EOL", "x\r\ny\n");
  assert.deepEqual(rows, [{ a: "x" }, { a: "y" }]);
});

Deno.test("EOL inside a pattern makes records span lines", () => {
  const p = "'BEGIN ' INT:id EOL 'user=' WORD:user EOL 'END'";
  const pattern = compile(p);
  assert.equal(pattern.multiLine, true);
  const text = "BEGIN 1\nuser=ann\nEND\nnoise\nBEGIN 2\nuser=bob\nEND\n";
  const { rows, matched, skipped } = parseAll(p, text);
  assert.deepEqual(rows, [{ id: 1, user: "ann" }, { id: 2, user: "bob" }]);
  assert.equal(matched, 2);
  assert.equal(skipped, 1);
  assert.deepEqual(pattern.makeExtractor(["user"])("BEGIN 3\nuser=cy\nEND"), { user: "cy" });
});

Deno.test("extractAll() skips and counts records that do not match, not blank lines", () => {
  const text = "1 a\nbad\n\n2 b\nalso bad\n3 c";
  const { rows, matched, skipped } = parseAll("INT:n ' ' WORD:w EOL", text);
  assert.deepEqual(rows.map((r) => r.n), [1, 2, 3]);
  assert.equal(matched, 3);
  assert.equal(skipped, 2);
});

Deno.test("extractAll() reads only the range it is given", () => {
  const text = "1\n2\n3\n4\n";
  const rows: Row[] = [];
  const start = text.indexOf("2");
  const end = text.indexOf("4");
  compile("INT:n EOL").extractAll(text, start, end, (r) => rows.push(r));
  assert.deepEqual(rows, [{ n: 2 }, { n: 3 }]);
});

Deno.test("an extractor converts only the fields it is asked for", () => {
  const pattern = compile("WORD:a ' ' JSON:j ' ' HTTPDATE:t");
  const line = 'x {"k": 1} 10/Oct/2024:13:55:36 +0000';
  const realParse = JSON.parse;
  let parses = 0;
  JSON.parse = (...args: Parameters<typeof JSON.parse>) => {
    parses++;
    return realParse(...args);
  };
  try {
    const onlyA = pattern.makeExtractor(["a"])(line);
    assert.deepEqual(onlyA, { a: "x" });
    assert.equal(parses, 0, "JSON was not converted");
    const withJ = pattern.makeExtractor(["j", "a"])(line);
    assert.deepEqual(withJ, { j: { k: 1 }, a: "x" });
    assert.equal(parses, 1);
  } finally {
    JSON.parse = realParse;
  }
  assert.throws(() => pattern.makeExtractor(["nope"]), /no field 'nope'/);
});

Deno.test("ISO8601 and TIMESTAMP without an offset use the query's time zone", () => {
  const p = compile("ISO8601:t", "Europe/Berlin");
  assert.deepEqual(p.makeExtractor(["t"])("2024-07-01 12:00:00"), {
    t: new Timestamp(Date.UTC(2024, 6, 1, 10)),
  });
});

Deno.test("REGEX keeps its escapes as written; literals read theirs", () => {
  assert.deepEqual(one("WORD:w ' ' REGEX('\\d+'):r", "n 512x"), { w: "n", r: "512" });
  assert.deepEqual(one("REGEX('[^\\s]+'):r ' ' WORD:w", "a-b c"), { r: "a-b", w: "c" });
  assert.deepEqual(one("REGEX('\\'x\\''):q", "'x'"), { q: "'x'" }, "an escaped quote is the quote");
  assert.deepEqual(one("'\\t' WORD:w", "\tok"), { w: "ok" });
});

Deno.test("compilePattern() reports mistakes with their offset in the pattern", () => {
  const cases: [string, RegExp, number][] = [
    ["INT:a ' ' INTT:b", /unknown matcher 'INTT' \(did you mean 'INT'\?\)/, 10],
    ["WORD:a 'x", /unterminated string/, 7],
    ["WORD:a (INT | ", /expected '\)'/, 14],
    ["WORD:a ) INT", /unexpected '\)'/, 7],
    ["WORD:a ' ' WORD:a", /'a' is named twice/, 11],
    ["(INT:a | WORD:a)", /'a' is named again with another type/, 9],
    ["WORD: INT", /expected a field name after ':'/, 5],
    ["'x':name", /a literal cannot be named/, 0],
    ["TIMESTAMP", /expected '\(' and a quoted argument/, 9],
    ["WORD ' ' TIMESTAMP('yyyy-qq')", /unknown letter 'q'/, 19],
    ["WORD REGEX('a(b')", /invalid REGEX/, 11],
    ["EOL:x", /EOL cannot be named/, 0],
    ["", /empty/, 0],
    ["WORD ()", /alternative of a choice is empty/, 6],
    ["WORD %", /expected a literal, a matcher or '\(', found '%'/, 5],
    ["WORD '\\d'", /unknown escape '\\d' in a string/, 6],
  ];
  for (const [text, message, offset] of cases) {
    const r = compilePattern(text, { timeZone: "UTC" });
    assert.equal(r.ok, false, text);
    if (!r.ok) {
      assert.match(r.message, message, text);
      assert.equal(r.offset, offset, `${text}: ${r.message}`);
    }
  }
});

Deno.test("REGEX groups of their own do not shift the fields after them", () => {
  assert.deepEqual(one("REGEX('(a)(b)'):x ' ' REGEX('(c)') ' ' WORD:w", "ab c z"), {
    x: "ab",
    w: "z",
  });
});

Deno.test("matcher names are case-insensitive and names may be backquoted", () => {
  assert.deepEqual(one("word:`first word` ' ' int:n", "hi 3"), { "first word": "hi", n: 3 });
});

Deno.test("extractAll() with more text to come holds back records that may continue", () => {
  const pattern = compile("'BEGIN ' INT:id EOL 'user=' WORD:user EOL 'END' EOL");
  assert.equal(pattern.maxLines, 3);
  const text = "BEGIN 1\nuser=ann\nEND\nnoise\nBEGIN 2\nuser=bob\nEND\nBEGIN 3\nuser=cy\nEND\n";
  const lineEnds = [...text.matchAll(/\n/g)].map((m) => m.index! + 1);
  // Every way of cutting the text into two chunks at a line boundary gives the same rows.
  for (const cut of lineEnds) {
    const rows: Row[] = [];
    let carry = "";
    let skipped = 0;
    for (const [chunk, more] of [[text.slice(0, cut), true], [text.slice(cut), false]] as const) {
      const buf = carry + chunk;
      const r = pattern.extractAll(buf, 0, buf.length, (row) => rows.push(row), { more });
      skipped += r.skipped;
      carry = buf.slice(r.next);
    }
    assert.deepEqual(rows.map((r) => r.id), [1, 2, 3], `cut at ${cut}`);
    assert.equal(skipped, 1, `cut at ${cut}`);
    assert.equal(carry, "");
  }
  // A pattern of single lines never holds anything back.
  const r = compile("INT:n EOL").extractAll("1\n2\n", 0, 4, () => {}, { more: true });
  assert.equal(r.next, 4);
});

Deno.test("a field named in two alternatives is converted with the matcher of the one that matched", () => {
  const p = `(TIMESTAMP('MMM dd HH:mm:ss yyyy'):time | TIMESTAMP('MMM  d HH:mm:ss yyyy'):time) EOL`;
  const { rows } = parseAll(p, "Jul 10 09:10:11 2024\nJul  1 09:10:11 2024\n");
  assert.deepEqual(rows, [
    { time: new Timestamp(Date.UTC(2024, 6, 10, 9, 10, 11)) },
    { time: new Timestamp(Date.UTC(2024, 6, 1, 9, 10, 11)) },
  ]);
  // Only that field needed: the extractor made for it converts with both formats too.
  const compiled = compile(p);
  assert.deepEqual(
    compiled.makeExtractor(["time"])("Jul  1 09:10:11 2024"),
    { time: new Timestamp(Date.UTC(2024, 6, 1, 9, 10, 11)) },
  );
});

Deno.test("a lazy LD before an optional part runs up to it, or to the end of the line", () => {
  const p = "LD:msg (', client: ' IPADDR:client)? EOL";
  assert.deepEqual(one(p, "upstream timed out, client: 192.0.2.7"), {
    msg: "upstream timed out",
    client: new IpAddr(4, 0xc0000207),
  });
  assert.deepEqual(one(p, "no client here"), { msg: "no client here", client: null });
  // Nothing after the optional part: the LD still takes the line when the part is absent.
  const q = "LD:msg (', client: ' IPADDR:client)?";
  assert.deepEqual(one(q, "no client here"), { msg: "no client here", client: null });
  assert.deepEqual(one(q, "x, client: 192.0.2.7, server: a"), {
    msg: "x",
    client: new IpAddr(4, 0xc0000207),
  });
  // In the middle: the LD stops where the optional part first matches.
  const r = "LD:msg (', client: ' IPADDR:client)? ', server: ' NSPACE:server";
  assert.deepEqual(one(r, "x, client: 192.0.2.7, server: a"), {
    msg: "x",
    client: new IpAddr(4, 0xc0000207),
    server: "a",
  });
  assert.deepEqual(one(r, "x, server: a"), { msg: "x", client: null, server: "a" });
});

Deno.test("DATA is refused without record_start, and takes the rest of a record at the end", () => {
  const refused = compilePattern("WORD:w EOL DATA:rest", { timeZone: "UTC" });
  assert.equal(refused.ok, false);
  assert.match((refused as { message: string }).message, /record_start/);
  const r = compilePattern("WORD:w (EOL DATA:rest)?", { timeZone: "UTC", records: true });
  if (!r.ok) throw new Error(r.message);
  const ex = r.pattern.makeExtractor(["w", "rest"]);
  assert.deepEqual(ex("head\n  line 2\n  line 3"), { w: "head", rest: "  line 2\n  line 3" });
  assert.deepEqual(ex("alone"), { w: "alone", rest: null });
});

Deno.test("JAVANAME, HOSTPORT, IPLIST and EPOCH read what their names say", () => {
  assert.deepEqual(one("JAVANAME:c EOL", "QuorumCnxManager$SendWorker.run"), {
    c: "QuorumCnxManager$SendWorker.run",
  });
  assert.deepEqual(one("HOSTPORT:h", "db-1.example.com:5432"), {
    h: { host: "db-1.example.com", port: 5432 },
  });
  assert.deepEqual(one("HOSTPORT:h", "[2001:db8::1]:99999"), {
    h: { host: "2001:db8::1", port: null },
  });
  assert.deepEqual(one("IPLIST:a EOL", "198.51.100.7, 192.0.2.44,2001:db8::2"), {
    a: [
      new IpAddr(4, 0xc6336407),
      new IpAddr(4, 0xc000022c),
      new IpAddr(6, 0x20010db8n << 96n | 2n),
    ],
  });
  assert.deepEqual(one("EPOCH:t EOL", "1730800801.987"), {
    t: new Timestamp(Date.UTC(2024, 10, 5, 10, 0, 1, 987)),
  });
  assert.deepEqual(one("EPOCHMS:t EOL", "1730800801987"), {
    t: new Timestamp(Date.UTC(2024, 10, 5, 10, 0, 1, 987)),
  });
});

Deno.test("a sub-pattern $name is used in line, optional with ?, and refused when unknown or looping", () => {
  const subs: Record<string, string> = {
    ip_port: "IPV4:ip ':' INT:port",
    a: "'x' $b",
    b: "'y' $a",
  };
  const compile = (text: string) =>
    compilePattern(text, { timeZone: "UTC", subPatterns: (n) => subs[n] });
  const ok = compile("'from ' $ip_port ($ip_port)? EOL");
  assert.equal(ok.ok, false); // the second use names ip and port again
  const r = compile("'from ' $ip_port (' via ' WORD:via)? EOL");
  if (!r.ok) throw new Error(r.message);
  assert.deepEqual(r.pattern.makeExtractor(["ip", "port", "via"])("from 10.0.0.1:80 via x"), {
    ip: new IpAddr(4, 0x0a000001),
    port: 80,
    via: "x",
  });
  // Not optional, the sub-pattern is spliced in: the byte scanner still covers the pattern.
  const plain = compile("'from ' $ip_port ' ' WORD:via");
  assert.ok(plain.ok && plain.pattern.makeByteScanner(["ip"]) !== null);
  const unknown = compile("$nope EOL");
  assert.ok(!unknown.ok && /unknown sub-pattern '\$nope'/.test(unknown.message));
  const loop = compile("$a");
  assert.ok(!loop.ok && /uses itself \(\$a → \$b → \$a\)/.test(loop.message), JSON.stringify(loop));
});

Deno.test("on the linear engine a record keeps all its lines for DATA, and the LD before an optional tail still fills", () => {
  // `LD 'a' NSPACE ' '` could backtrack without bound: the pattern runs on re2js.
  const r = compilePattern("LD:x 'a' NSPACE:y ' ' LD:msg (EOL DATA:trace)?", {
    timeZone: "UTC",
    records: true,
  });
  if (!r.ok) throw new Error(r.message);
  const ex = r.pattern.makeExtractor(["y", "msg", "trace"]);
  assert.deepEqual(ex("xa1 hello\n  at 1\n  at 2\n  at 3"), {
    y: "1",
    msg: "hello",
    trace: "  at 1\n  at 2\n  at 3",
  });
  assert.deepEqual(ex("xa1 hello world"), { y: "1", msg: "hello world", trace: null });
});

Deno.test("a DATA before an optional part looks for it across lines, and runs to the record's end", () => {
  const r = compilePattern("WORD:w ' ' DATA:msg (', client: ' IPV4:client)?", {
    timeZone: "UTC",
    records: true,
  });
  if (!r.ok) throw new Error(r.message);
  const ex = r.pattern.makeExtractor(["msg", "client"]);
  assert.deepEqual(ex("e one\ntwo, client: 10.0.0.1, x"), {
    msg: "one\ntwo",
    client: new IpAddr(4, 0x0a000001),
  });
  assert.deepEqual(ex("e one\ntwo"), { msg: "one\ntwo", client: null });
});

Deno.test("extractAll() past `until` pauses at a record's start, and calls resumed from `next` give every row once", () => {
  const lines = Array.from({ length: 100 }, (_, i) => (i % 7 === 3 ? "x\n" : `${i}\n\n`));
  const text = lines.join("");
  for (const pattern of ["INT:n EOL", "INT:n EOL LD:rest EOL"]) {
    const p = compile(pattern);
    const whole: Row[] = [];
    const once = p.extractAll(text, 0, text.length, (r) => whole.push(r));
    assert.equal(once.paused, undefined);
    const rows: Row[] = [];
    let matched = 0;
    let skipped = 0;
    let calls = 0;
    for (let start = 0;;) {
      // A deadline long gone: every call stops as soon as it may.
      const counts = p.extractAll(text, start, text.length, (r) => rows.push(r), { until: 0 });
      calls++;
      matched += counts.matched;
      skipped += counts.skipped;
      if (!counts.paused) break;
      assert.ok(counts.next > start && counts.next < text.length, `next ${counts.next}`);
      const before = text.charCodeAt(counts.next - 1);
      assert.equal(before, 10, "a pause stops at a line's start");
      start = counts.next;
    }
    assert.ok(calls > 5, `${pattern}: ${calls} calls`);
    assert.deepEqual(rows, whole, pattern);
    assert.equal(matched, once.matched);
    assert.equal(skipped, once.skipped);
  }
});

Deno.test("extractAll() whose records each take milliseconds pauses within a few of them past `until`", () => {
  const text = Array.from({ length: 40 }, (_, i) => `${i}\n`).join("");
  const p = compile("INT:n EOL");
  const busy = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end) { /* a slow filter */ }
  };
  const started = performance.now();
  let rows = 0;
  const counts = p.extractAll(text, 0, text.length, () => {
    rows++;
    busy(2);
  }, { until: started + 20 });
  assert.equal(counts.paused, true);
  // 8 records to learn they are slow (16 ms), then the clock at every one: the pause comes
  // at the 11th or so (sooner on a loaded machine, where time passes faster than the work).
  // Read every 8 records only, the call would run 15 (30 ms).
  assert.ok(rows <= 12, `${rows} records before the pause`);
});

Deno.test("compilePattern() refuses a pattern whose optional parts after LDs would make too many readings", () => {
  const pairs = (k: number) =>
    Array.from({ length: k }, (_, i) => `LD:a${i} ('k${i}=' INT:n${i})?`).join(" ") + " EOL";
  assert.ok(compilePattern(pairs(8), { timeZone: "UTC" }).ok);
  const refused = compilePattern(pairs(9), { timeZone: "UTC" });
  assert.ok(!refused.ok);
  assert.match(refused.message, /too many optional parts after LD or DATA/);
});

Deno.test("KVP(',') and KVP(';') read pairs separated by that character", () => {
  assert.deepEqual(one("KVP(','):kv EOL", 'a=1, b="x, y",c='), {
    kv: { a: "1", b: "x, y", c: "" },
  });
  assert.deepEqual(one("KVP(';'):kv ' end' EOL", "a=1;b=2 end"), { kv: { a: "1", b: "2" } });
  // Without an argument, spaces separate, and a comma is part of a value.
  assert.deepEqual(one("KVP:kv EOL", "a=1, b=2"), { kv: { a: "1,", b: "2" } });
  // `KVP (...)` with a space is KVP then a group.
  assert.deepEqual(one("KVP:kv ('!' | '?') EOL", "a=1 b=2!"), { kv: { a: "1", b: "2" } });
  for (const bad of ["KVP('ab')", "KVP('=')", "KVP(' ')"]) {
    const r = compilePattern(bad, { timeZone: "UTC" });
    assert.ok(!r.ok && /KVP takes one separator character/.test(r.message), bad);
  }
});
