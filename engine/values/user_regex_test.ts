import assert from "node:assert/strict";
import { compileUserRegex, regexShape } from "./user_regex.ts";
import { engineHome } from "../../tests/support/engine_home.ts";

const EVIL_LINE = "a".repeat(29) + "!";

/** Runs `f` and says how long it took, in ms. */
function timed(f: () => void): number {
  const started = performance.now();
  f();
  return performance.now() - started;
}

Deno.test("expressions that backtrack exponentially in V8 answer at once", () => {
  for (const source of ["^(a+)+$", "^(a|a)+$", "(a+)+$", "^(a|aa)+$", "(.*a){20}!x"]) {
    const compiled = compileUserRegex(source);
    assert.ok(compiled.ok, source);
    assert.equal(compiled.regex.native, false, source);
    const ms = timed(() => assert.equal(compiled.regex.test(EVIL_LINE), false));
    // Backtracking would take minutes on this line; 2 s leaves room for a busy machine.
    assert.ok(ms < 2000, `${source}: ${ms.toFixed(0)} ms`);
  }
});

Deno.test("a quantifier over a long run is linear: \\d+x over 100 000 digits", () => {
  const compiled = compileUserRegex("\\d+\\.\\d+x");
  assert.ok(compiled.ok);
  const ms = timed(() => assert.equal(compiled.regex.test("1".repeat(100_000)), false));
  assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
});

Deno.test("words, alternations and bounded classes stay on V8's engine", () => {
  for (
    const source of ["error", "timeout|refused", "^GET /api", "\\d{1,3}\\.\\d{1,3}", "[A-Z]?x"]
  ) {
    assert.equal(regexShape(source).bounded, true, source);
  }
  for (const source of ["\\d+", "a*", "(ab)?c?d?e?f?g?h?i?j?", "(x|y){2}", "a{3,}"]) {
    assert.equal(regexShape(source).bounded, false, source);
  }
  // Escaped and classed metacharacters are not quantifiers or groups.
  assert.equal(regexShape("\\+\\*[+*(]\\(x\\)").bounded, true);
});

Deno.test("both engines give the same matches and groups", () => {
  const texts = ["GET /api/v1 200", "x=12 y=345", "", "ünï 😀 code", "a\nb", "a\u00a0b\u3000c d"];
  const sources = [
    "(\\w+)=(\\d+)",
    "^(GET|POST) (\\S+)",
    "(x)?(y)",
    "(?<key>\\w+)=",
    "😀 (\\w+)",
    "a.b",
    "[^ ]+$",
    "\\s(\\d{3})$",
    "(\\S+)\\s+(\\S+)",
    "[\\s]+",
    "\\\\s+",
  ];
  for (const source of sources) {
    const compiled = compileUserRegex(source);
    assert.ok(compiled.ok, source);
    const v8 = new RegExp(source, "u");
    for (const text of texts) {
      const want = v8.exec(text);
      const got = compiled.regex.exec(text);
      assert.deepEqual(got && [...got], want && [...want], `${source} on ${JSON.stringify(text)}`);
      assert.equal(compiled.regex.test(text), v8.test(text));
    }
  }
});

Deno.test("backreferences and lookaround are refused with the construct and its position", () => {
  const cases: [string, RegExp, number][] = [
    ["(a)\\1", /backreference \('\\1'\)/, 3],
    ["(?<x>a)\\k<x>", /named backreference/, 7],
    ["a(?=b)", /lookahead/, 1],
    ["a(?!b)", /lookahead/, 1],
    ["x(?<=a)", /lookbehind/, 1],
    ["x(?<!a)", /lookbehind/, 1],
  ];
  for (const [source, message, offset] of cases) {
    const compiled = compileUserRegex(source);
    assert.equal(compiled.ok, false, source);
    if (compiled.ok) continue;
    assert.match(compiled.message, message);
    assert.match(compiled.message, /linear/);
    assert.equal(compiled.offset, offset, source);
  }
  // Inside a class or escaped, they are characters.
  assert.ok(compileUserRegex("[(?=]\\(\\?=").ok);
});

Deno.test("~, regex_extract and a PARSE REGEX over a hostile line finish at once", async () => {
  await using home = await engineHome();
  await home.write("/shared/evil.log", `${EVIL_LINE}\n${"a".repeat(40)}\n`);
  const scripts: [string, number][] = [
    [`PARSE(pattern: '''LD:s EOL''', src: '/shared/evil.log') | filter(s ~ '^(a+)+$')`, 1],
    [
      `PARSE(pattern: '''LD:s EOL''', src: '/shared/evil.log') | filter(s like '%a%a%a%a%a%a%a%b')`,
      0,
    ],
    [
      `PARSE(pattern: '''LD:s EOL''', src: '/shared/evil.log')
       | select(regex_extract(s, '^(a|a)+$') as x) | filter(x is not null)`,
      1,
    ],
    [`PARSE(pattern: '''REGEX('(a+)+$'):s EOL''', src: '/shared/evil.log')`, 1],
  ];
  for (const [text, count] of scripts) {
    const started = performance.now();
    const { rows } = await home.run(text);
    assert.equal(rows.length, count, text);
    const ms = performance.now() - started;
    assert.ok(ms < 1000, `${text}: ${ms.toFixed(0)} ms`);
  }
});

Deno.test("a refused construct is a check-time mistake naming it", async () => {
  await using home = await engineHome();
  const cases: [string, RegExp][] = [
    [`VALUES((s: 'aa')) | filter(s ~ '''(a)\\1''')`, /backreference.*at character 4/],
    [`VALUES((s: 'aa')) | select(regex_extract(s, 'a(?=a)') as x)`, /lookahead.*at character 2/],
    [`PARSE(pattern: '''REGEX('a(?<=a)'):s''', src: '/shared/x.log')`, /lookbehind/],
  ];
  for (const [text, message] of cases) {
    const diagnostics = await home.diagnose(text);
    assert.equal(diagnostics.length, 1, text);
    assert.match(diagnostics[0]!.message, message);
  }
});

Deno.test("a leading (?i) ignores case, on V8's engine and on re2js", async () => {
  for (const [source, native] of [["(?i)error", true], ["(?i)dis+k", false]] as const) {
    const compiled = compileUserRegex(source);
    assert.ok(compiled.ok);
    assert.equal(compiled.regex.native, native, source);
    assert.ok(compiled.regex.test("ERROR on DISK"), source);
    const plain = compileUserRegex(source.slice("(?i)".length));
    assert.ok(plain.ok && !plain.regex.test("ERROR on DISK"), `${source} without (?i)`);
  }
  // A refused construct is placed in the text as written, `(?i)` counted.
  const refused = compileUserRegex("(?i)(a)\\1");
  assert.ok(!refused.ok);
  assert.equal(refused.offset, 7);
  await using home = await engineHome();
  const { rows } = await home.run(
    `VALUES((s: 'Error on DISK sda')) | select(s ~ '(?i)error' as a, s ~ 'error' as b,
       regex_extract(s, '(?i)d[a-z]+k') as c, regex_extract(s, '''(?i)(s\\w+)$''', 1) as d,
       regex_replace(s, '(?i)on', '@') as e, regex_replace(s, '(?i)s+d', '#') as f)`,
  );
  assert.deepEqual(rows, [{
    a: true,
    b: false,
    c: "DISK",
    d: "sda",
    e: "Error @ DISK sda",
    f: "Error on DISK #a",
  }]);
});
