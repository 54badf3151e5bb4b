import assert from "node:assert/strict";
import { check } from "./front.ts";
import { printScript } from "./printer.ts";
import { FUNCTION_CATALOG, lookupFunction } from "./checker_catalog.ts";
import { lookupSource, SOURCE_CATALOG, SOURCE_NAMES } from "./source_catalog.ts";
import { functionArity, FUNCTIONS } from "../functions/function_registry.ts";
import { languageReference } from "../../tests/support/language_reference.ts";

Deno.test("check() returns the script when there is no problem", () => {
  const r = check("READ_JSON(src: '/x') | filter(status = 200)");
  assert.deepEqual(r.diagnostics, []);
  assert.equal(printScript(r.script!), `(pipeline (read_json src:"/x") (filter (= status 200)))`);
});

Deno.test("check() reports syntax and static problems together, in script order", () => {
  const r = check("@a = READ_JSON(src: '/x') | fliter(a);\n$b = (1;\n@a | select(cunt(*))");
  assert.equal(r.script, undefined);
  assert.deepEqual(r.diagnostics.map((d) => `${d.code} ${d.line}:${d.column}`), [
    "UNKNOWN_NAME 1:29",
    "SYNTAX_ERROR 2:8",
    "UNKNOWN_NAME 3:13",
  ]);
});

Deno.test("check() does not report later uses of a name whose binding failed to parse", () => {
  const r = check("@a = READ_JSON(src: '/x' | filter(a);\n@a | filter($b = 1)");
  assert.deepEqual(r.diagnostics.map((d) => `${d.code} ${d.line}`), [
    "SYNTAX_ERROR 1",
    "UNKNOWN_NAME 2",
  ]);
});

Deno.test("check() skips NO_RESULT when statements were dropped by syntax errors", () => {
  assert.deepEqual(check("READ_JSON(src: '/x' | x").diagnostics.map((d) => d.code), [
    "SYNTAX_ERROR",
  ]);
});

Deno.test("check() gives every diagnostic a line and a column", () => {
  for (const text of ["", "$x = 1", "@y", "@[/a](", "'", "VALUES(1)", "init(a::X)"]) {
    for (const d of check(text).diagnostics) {
      assert.ok(d.line! >= 1 && d.column! >= 1, `${text}: ${JSON.stringify(d)}`);
    }
  }
});

Deno.test("the function catalogue lists every function of the reference once, and no other", () => {
  const names = FUNCTION_CATALOG.map((f) => f.name);
  assert.equal(new Set(names).size, names.length);
  const documented = languageReference();
  // The count comes from the reference, not from here: a function added to both passes.
  assert.deepEqual(names.map((n) => n.toLowerCase()).sort(), documented.functions);
  assert.deepEqual(
    FUNCTION_CATALOG.filter((f) => f.aggregate).map((f) => f.name.toLowerCase()).sort(),
    documented.aggregates,
  );
  assert.equal(lookupFunction("REGEX_EXTRACT")?.maxArgs, 3);
  assert.equal(lookupSource("read_json")?.name, "READ_JSON");
});

Deno.test("the parser and the checker name the sources of the one source catalogue", () => {
  const start = check("1 | filter(a)").diagnostics[0]!.message;
  for (const name of SOURCE_NAMES) assert.ok(start.includes(name), `${name} in: ${start}`);
  const unknown = check("SOURCES_OF_NOTHING(src: 'x')").diagnostics[0]!.message;
  assert.ok(unknown.includes(SOURCE_NAMES.join(", ")), unknown);
  for (const sig of SOURCE_CATALOG) {
    const bad = check(`${sig.name}(src: 'x', bogus: 1)`).diagnostics.map((d) => d.message);
    assert.ok(bad.some((m) => m.includes([...sig.required, ...sig.optional].join(", "))), sig.name);
  }
});

Deno.test("the checker takes each function's arity from its implementation", () => {
  for (const [name, def] of FUNCTIONS) {
    const { min, max } = functionArity(def);
    assert.deepEqual([lookupFunction(name)?.minArgs, lookupFunction(name)?.maxArgs], [min, max]);
  }
  assert.equal(lookupFunction("count")?.star, true);
  assert.equal(lookupFunction("sum")?.star, undefined);
});
