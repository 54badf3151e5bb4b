import assert from "node:assert/strict";
import { engineHome } from "../../tests/support/engine_home.ts";
import { formatDiagnostic } from "../front/diagnostics.ts";

const VIEW = `init(ip::IPADDR, min: 2);
VALUES((ip: 10.0.0.1, n: 1), (ip: 10.0.0.1, n: 5), (ip: 10.0.0.2, n: 9))
| filter(ip = $ip and n >= $min)
| select(n)`;

Deno.test("a stored script runs by path with its arguments parsed by their declared types", async () => {
  await using home = await engineHome();
  await home.write("/user/views/hits.sx", VIEW);
  const { rows } = await home.run({ path: "/user/views/hits.sx" }, { args: { ip: "10.0.0.1" } });
  assert.deepEqual(rows, [{ n: 5 }]);
  const lower = await home.run({ path: "/user/views/hits.sx" }, {
    args: { ip: "10.0.0.1", min: "0" },
  });
  assert.deepEqual(lower.rows, [{ n: 1 }, { n: 5 }]);
});

Deno.test("a view argument that is missing, unknown or not of its type is refused by name", async () => {
  await using home = await engineHome();
  await home.write("/user/views/hits.sx", VIEW);
  const messages = async (args: Record<string, string>) =>
    (await home.diagnose({ path: "/user/views/hits.sx" }, { args })).map((d) => {
      assert.equal(d.code, "BAD_ARGUMENT");
      return d.message;
    });
  assert.deepEqual(await messages({}), ["missing mandatory argument 'ip'"]);
  assert.deepEqual(await messages({ ip: "10.0.0.1", x: "1" }), ["unknown argument 'x'"]);
  assert.deepEqual(await messages({ ip: "abc" }), ["'abc' is not an IPADDR for argument 'ip'"]);
  assert.deepEqual(await messages({ ip: "10.0.0.1", min: "two" }), [
    "'two' is not an INTEGER for argument 'min'",
  ]);
});

Deno.test("@[script.sx](args) inlines a view, relative paths resolving in its folder", async () => {
  await using home = await engineHome();
  await home.write("/user/views/hits.sx", VIEW);
  await home.write("/user/views/top.sx", "@[hits.sx](ip: 10.0.0.2, min: 0) | select(n * 2 as d)");
  const { rows } = await home.run(
    "@[/user/views/top.sx] | union(@[/user/views/hits.sx](ip: '10.0.0.1'))",
  );
  assert.deepEqual(rows, [{ d: 18, n: null }, { d: null, n: 5 }]);
});

Deno.test("a view call with an argument of the wrong type names the argument at the call", async () => {
  await using home = await engineHome();
  await home.write("/user/views/hits.sx", VIEW);
  const diagnostics = await home.diagnose("\n  @[/user/views/hits.sx](ip: true)");
  assert.equal(diagnostics.length, 1);
  assert.equal(diagnostics[0]!.code, "BAD_ARGUMENT");
  assert.equal(diagnostics[0]!.line, 2);
  assert.match(diagnostics[0]!.message, /is not an IPADDR for argument 'ip'/);
  // An INTEGER is 32 bits at a call as in the API's text: 5000000000 is refused, not rendered
  // as another number where the schema says INTEGER.
  const wide = await home.diagnose("@[/user/views/hits.sx](ip: 10.0.0.1, min: 5000000000)");
  assert.deepEqual(wide.map((d) => d.message), [
    "'5000000000' is not an INTEGER for argument 'min'",
  ]);
  const { rows } = await home.run("@[/user/views/hits.sx](ip: 10.0.0.1, min: 2147483647)");
  assert.deepEqual(rows, []);
});

Deno.test("a view that calls itself through another is refused, naming the chain", async () => {
  await using home = await engineHome();
  await home.write("/user/a.sx", "@[b.sx] | select(x)");
  await home.write("/user/b.sx", "@[/user/a.sx]");
  const diagnostics = await home.diagnose({ path: "/user/a.sx" });
  const recursion = diagnostics.find((d) => d.code === "RECURSION");
  assert.ok(recursion, JSON.stringify(diagnostics));
  assert.match(
    recursion.message,
    /\/users\/alice\/a\.sx → \/users\/alice\/b\.sx → \/users\/alice\/a\.sx/,
  );
  assert.equal(recursion.script, "/users/alice/b.sx");
});

Deno.test("a mistake inside a stored script names that script", async () => {
  await using home = await engineHome();
  await home.write("/user/bad.sx", "VALUES((a: 1))\n| select(nope)");
  const diagnostics = await home.diagnose("@[/user/bad.sx]");
  assert.equal(diagnostics.length, 1);
  assert.match(
    formatDiagnostic(diagnostics[0]!),
    /^\/users\/alice\/bad\.sx: line 2, column \d+: .*nope/,
  );
});

Deno.test("a stored script or table that does not exist or may not be used is a diagnostic", async () => {
  await using home = await engineHome({ user: { name: "bob", groups: [], admin: false } });
  await Deno.mkdir(`${home.tree.root}/users/alice`, { recursive: true });
  await Deno.writeTextFile(`${home.tree.root}/users/alice/v.sx`, "VALUES((a: 1))");
  const missing = await home.diagnose("@[/shared/none.sxt]");
  assert.equal(missing[0]!.code, "NOT_FOUND");
  // Another user's folder is invisible: the same answer whether the file exists or not.
  const hidden = await home.diagnose("@[/users/alice/v.sx]");
  const absent = await home.diagnose("@[/users/alice/none.sx]");
  assert.equal(hidden[0]!.code, "NOT_FOUND");
  assert.equal(absent[0]!.code, "NOT_FOUND");
  assert.equal(hidden[0]!.message.replace("v.sx", "none.sx"), absent[0]!.message);
  const run = await home.diagnose({ path: "/users/alice/v.sx" });
  assert.equal(run[0]!.code, "NOT_FOUND");
  // A file the user may see (everyone lists /system) but not read is FORBIDDEN.
  await Deno.mkdir(`${home.tree.root}/system`, { recursive: true });
  await Deno.writeTextFile(`${home.tree.root}/system/t.sxt`, "");
  const forbidden = await home.diagnose("@[/system/t.sxt]");
  assert.equal(forbidden[0]!.code, "FORBIDDEN");
});
