import assert from "node:assert/strict";
import { checkScript, isLiteralValue } from "./checker.ts";
import { COMMAND_NAMES, parse } from "./parser.ts";
import { FOREIGN_NAMES } from "./foreign_names.ts";
import { lookupFunction } from "./checker_catalog.ts";

/** `code line:column message` of every static problem; the script must parse. */
function problems(text: string): string[] {
  const parsed = parse(text);
  assert.deepEqual(parsed.diagnostics, [], `syntax errors in ${text}`);
  return checkScript(parsed.script).map((d) => `${d.code} ${d.line}:${d.column} ${d.message}`);
}

const SRC = "VALUES((a: 1))";

Deno.test("checkScript() accepts a correct script", () => {
  assert.deepEqual(
    problems(`init(ip::IPADDR, n: 5, net: NET('10.0.0.0/8'), since: T('2024-01-01'), d: -1 day);
$x = $n + 1;
@s = READ_JSON(src: '/x', from: $since) | filter(ip in $net and a > $x);
@s | select(a, count(*) as c, sum(b)) | group(a) | sort(@2 desc) | limit(10)`),
    [],
  );
});

Deno.test("checkScript() reports unknown functions with a suggestion", () => {
  assert.deepEqual(problems(`${SRC} | select(cunt(*))`), [
    "UNKNOWN_NAME 1:25 unknown function 'cunt' (did you mean 'count'?)",
  ]);
  assert.deepEqual(problems(`${SRC} | filter(zzzzzz(a))`), [
    "UNKNOWN_NAME 1:25 unknown function 'zzzzzz'",
  ]);
});

Deno.test("checkScript() answers other languages' functions with ours", () => {
  assert.deepEqual(problems(`${SRC} | select(dc(a), perc95(a), tostring(a), row_number())`), [
    "UNKNOWN_NAME 1:25 unknown function 'dc' (did you mean 'count_distinct'? dc (SPL): count_distinct(x))",
    "UNKNOWN_NAME 1:32 unknown function 'perc95' (did you mean 'percentile'? perc95 (SPL): percentile(x, 0.95) is the 95th percentile, one call per percentile)",
    "UNKNOWN_NAME 1:43 unknown function 'tostring' (did you mean 'STRING'? tostring (KQL, SPL): STRING(x))",
    "SYNTAX_ERROR 1:56 window function 'row_number' is allowed only in window(...), found in select; window(row_number(...) as name, by: key, order: key) adds it to each row",
  ]);
});

Deno.test("every foreign function points at one of ours and hides none of ours", () => {
  for (const f of FOREIGN_NAMES) {
    if (f.kind !== "function") continue;
    assert.equal(lookupFunction(f.name), undefined, `'${f.name}' is a function of ours`);
    if (f.ours !== null) assert.ok(lookupFunction(f.ours), `'${f.ours}' is not a function`);
  }
  for (const f of FOREIGN_NAMES) {
    if (f.kind === "command" && f.ours !== null && f.ours !== "PARSE") {
      assert.ok(
        COMMAND_NAMES.includes(f.ours) || lookupFunction(f.ours) !== undefined,
        `'${f.ours}' (for ${f.name}) is neither a command nor a function`,
      );
    }
  }
});

Deno.test("checkScript() checks the number of function arguments", () => {
  assert.deepEqual(problems(`${SRC} | select(substr(a), now(1), if(a, 1), concat())`), [
    "ARITY 1:25 function substr takes 2 or 3 arguments, found 1",
    "ARITY 1:36 function now takes 0 arguments, found 1",
    "ARITY 1:44 function if takes 3 arguments, found 2",
    "ARITY 1:54 function concat takes at least 1 argument, found 0",
  ]);
});

Deno.test("checkScript() treats function names case-insensitively", () => {
  assert.deepEqual(problems(`${SRC} | select(COUNT(*), Lower('A'), t('2024-01-01'))`), []);
});

Deno.test("checkScript() reports names used before they are bound", () => {
  assert.deepEqual(problems(`@a | filter(x = $p); $p = 1; @a = ${SRC}`), [
    "UNKNOWN_NAME 1:1 '@a' is used before it is bound (it is bound at line 1)",
    "UNKNOWN_NAME 1:17 '$p' is used before it is bound (it is bound at line 1)",
  ]);
  assert.deepEqual(problems(`$limit = 1; ${SRC} | filter(a = $limt) | union(@nope)`), [
    "UNKNOWN_NAME 1:41 '$limt' is not bound (did you mean '$limit'?); " +
    "declare it in init(...) or bind it with '$limt = ...' first",
    "UNKNOWN_NAME 1:56 '@nope' is not bound; bind it with '@nope = ...' first",
  ]);
});

Deno.test("checkScript() does not let a stream refer to itself", () => {
  assert.deepEqual(problems(`@a = @a | filter(a = 1)`), [
    "UNKNOWN_NAME 1:6 '@a' is used before it is bound (it is bound at line 1)",
  ]);
});

Deno.test("checkScript() wants init first and once, with known types and literal defaults", () => {
  assert.deepEqual(
    problems(`$x = 1; init(a::IPADRR, b: x, c: upper('x'), a::INTEGER); init(); ${SRC}`),
    [
      "SYNTAX_ERROR 1:9 init must be the first statement of the script",
      "UNKNOWN_NAME 1:14 unknown type 'IPADRR' of init argument 'a' (did you mean 'IPADDR'?)",
      "BAD_ARGUMENT 1:28 the default of init argument 'b' must be a literal (a number, string, " +
      "boolean, interval, IP address, network, or T('...'), IP('...'), NET('...')), found field 'x'",
      "BAD_ARGUMENT 1:34 the default of init argument 'c' must be a literal (a number, string, " +
      "boolean, interval, IP address, network, or T('...'), IP('...'), NET('...')), " +
      "found a call to upper(...)",
      "BAD_ARGUMENT 1:46 init argument 'a' is declared twice",
      "SYNTAX_ERROR 1:59 init appears twice; a script declares its arguments once",
    ],
  );
});

Deno.test("checkScript() refuses a script without a pipeline", () => {
  assert.deepEqual(problems("$x = 1;"), [
    "NO_RESULT 1:1 the script has no pipeline, so it has no result; end it with one, " +
    "such as READ_JSON(src: 'logs/*.json')",
  ]);
  assert.equal(problems("")[0]!.slice(0, 13), "NO_RESULT 1:1");
  assert.deepEqual(problems(`@x = ${SRC}`), []);
});

Deno.test("checkScript() checks the named arguments of sources", () => {
  assert.deepEqual(
    problems("PARSE(src: '/x', sr: 1, src: '/y') | union(LST(src: '/x'), READ_JSON(from: 1))"),
    [
      "BAD_ARGUMENT 1:25 argument 'src' of PARSE is given twice",
      "BAD_ARGUMENT 1:18 unknown argument 'sr' of PARSE (did you mean 'src'?)",
      "BAD_ARGUMENT 1:1 PARSE needs the argument 'pattern: ...'",
      "UNKNOWN_NAME 1:44 unknown source 'LST' (did you mean 'LIST'?)",
      "BAD_ARGUMENT 1:60 READ_JSON needs the argument 'src: ...'",
    ],
  );
});

Deno.test("checkScript() wants tuples as the rows of VALUES", () => {
  assert.deepEqual(problems("VALUES(1, (a: 2))"), [
    "SYNTAX_ERROR 1:8 each row of VALUES is a tuple such as (a: 1, b: 'x'), found number 1",
  ]);
  assert.deepEqual(problems("VALUES()"), ["ARITY 1:1 VALUES takes at least 1 row, found 0"]);
});

Deno.test("checkScript() allows aggregates only in select, and not nested", () => {
  assert.deepEqual(
    problems(`$n = count(*); ${SRC} | filter(sum(a) > 1) | select(max(min(a)))`),
    [
      "SYNTAX_ERROR 1:6 aggregate function 'count' is allowed only in select, " +
      "found in the value of $n",
      "SYNTAX_ERROR 1:40 aggregate function 'sum' is allowed only in select, found in filter",
      "SYNTAX_ERROR 1:65 aggregate function 'min' cannot be nested inside aggregate 'max'",
    ],
  );
});

Deno.test("checkScript() wants group right after a select", () => {
  assert.deepEqual(problems(`${SRC} | group(a)`), [
    "SYNTAX_ERROR 1:18 group must come right after a select: it groups the aggregates of that select",
  ]);
  assert.equal(problems(`${SRC} | select(a) | filter(a = 1) | group(a)`).length, 1);
});

Deno.test("checkScript() checks positions against the preceding select", () => {
  assert.deepEqual(problems(`${SRC} | select(a, count(*)) | group(@3) | sort(@0, @2)`), [
    "SYNTAX_ERROR 1:46 position @3 is out of range: the select before group has 2 columns",
    "SYNTAX_ERROR 1:57 position @0 is out of range: the select before sort has 2 columns",
  ]);
  assert.deepEqual(problems(`${SRC} | select(*) | sort(@7)`), []);
  assert.deepEqual(problems(`${SRC} | filter(@1 = 1)`), [
    "SYNTAX_ERROR 1:25 position @1 is allowed only in group and sort, found in filter",
  ]);
});

Deno.test("checkScript() allows '*' only in select(*) and count(*)", () => {
  assert.deepEqual(problems(`${SRC} | select(sum(*))`), [
    "SYNTAX_ERROR 1:29 '*' is allowed only as select(*) and count(*), found in sum(*)",
  ]);
});

Deno.test("checkScript() checks literal arguments of limit and save", () => {
  assert.deepEqual(problems(`${SRC} | limit(1.5, -1) | save(3)`), [
    "BAD_ARGUMENT 1:24 limit takes whole numbers of rows (0 or more), found number 1.5",
    "BAD_ARGUMENT 1:29 limit takes whole numbers of rows (0 or more), found number -1",
    "BAD_ARGUMENT 1:40 save takes the path of a table as a string, such as " +
    "save('/user/t.sxt'), found number 3",
  ]);
});

Deno.test("checkScript() wants literals or $names as stored script arguments", () => {
  assert.deepEqual(problems(`$p = 1; @[/v.sx](a: $p, b: 2, c: a + 1)`), [
    "BAD_ARGUMENT 1:34 argument 'c' of @[/v.sx] must be a literal or a $name, found an expression",
  ]);
});

Deno.test("checkScript() checks joins and unions on both sides", () => {
  assert.deepEqual(problems(`${SRC} | join(@r on left.a = $k) | union(VALUES((a: $q)))`), [
    "UNKNOWN_NAME 1:23 '@r' is not bound; bind it with '@r = ...' first",
    "UNKNOWN_NAME 1:38 '$k' is not bound; declare it in init(...) or bind it with '$k = ...' first",
    "UNKNOWN_NAME 1:61 '$q' is not bound; declare it in init(...) or bind it with '$q = ...' first",
  ]);
});

Deno.test("isLiteralValue() accepts literals and T/IP/NET of a string only", () => {
  const value = (t: string) => {
    const s = parse(`$x = ${t}`).script.statements[0]!;
    return s.kind === "let" ? isLiteralValue(s.value) : false;
  };
  assert.deepEqual(
    ["1", "-2.5", "'s'", "null", "10.0.0.1", "5 min", "T('x')", "ip('1')", "NET('a')"].map(value),
    [true, true, true, true, true, true, true, true, true],
  );
  assert.deepEqual(["a", "T(a)", "lower('x')", "1 + 1", "-a"].map(value), [
    false,
    false,
    false,
    false,
    false,
  ]);
});
