import assert from "node:assert/strict";
import { parseCommandLine, UsageError } from "./command_line.ts";

Deno.test("parseCommandLine() reads serve with its home and --set overrides", () => {
  assert.deepEqual(
    parseCommandLine(["serve", "--home", "/h", "--set", "wgui.port=0", "--set", "a.b=x=y"]),
    { kind: "serve", home: "/h", overrides: { "wgui.port": "0", "a.b": "x=y" } },
  );
});

Deno.test("parseCommandLine() takes the home from TRAWL_HOME, else ./trawl-home", () => {
  assert.deepEqual(parseCommandLine(["user", "list"], { TRAWL_HOME: "/env" }), {
    kind: "user list",
    home: "/env",
  });
  assert.deepEqual(parseCommandLine(["user", "list"]), { kind: "user list", home: "./trawl-home" });
  assert.deepEqual(parseCommandLine(["user", "list", "--home=/h"], { TRAWL_HOME: "/env" }), {
    kind: "user list",
    home: "/h",
  });
});

Deno.test("parseCommandLine() reads the user commands", () => {
  assert.deepEqual(
    parseCommandLine([
      "user",
      "add",
      "bob",
      "--admin",
      "--group",
      "a",
      "--group",
      "b",
      "--timezone",
      "UTC",
    ]),
    {
      kind: "user add",
      home: "./trawl-home",
      name: "bob",
      admin: true,
      groups: ["a", "b"],
      timeZone: "UTC",
    },
  );
  assert.deepEqual(parseCommandLine(["user", "remove", "bob"]), {
    kind: "user remove",
    home: "./trawl-home",
    name: "bob",
  });
  assert.deepEqual(parseCommandLine(["user", "token", "bob", "--home", "h"]), {
    kind: "user token",
    home: "h",
    name: "bob",
  });
  assert.deepEqual(parseCommandLine(["--help"]), { kind: "help" });
});

Deno.test("parseCommandLine() refuses what does not fit the usage", () => {
  const bad = [
    [],
    ["frobnicate"],
    ["user"],
    ["user", "delete", "bob"],
    ["user", "add"],
    ["user", "add", "a", "b"],
    ["user", "add", "bob", "--root"],
    ["serve", "extra"],
    ["serve", "--set", "novalue"],
    ["serve", "--set", "=x"],
    ["serve", "--home"],
    ["user", "list", "--admin"],
  ];
  for (const args of bad) assert.throws(() => parseCommandLine(args), UsageError, args.join(" "));
});

Deno.test("parseCommandLine() reads the rights commands and refuses others", () => {
  assert.deepEqual(parseCommandLine(["rights", "show", "--home", "/h"]), {
    kind: "rights show",
    home: "/h",
  });
  assert.deepEqual(parseCommandLine(["rights", "set", "g.json", "--home", "/h"]), {
    kind: "rights set",
    home: "/h",
    file: "g.json",
  });
  assert.throws(() => parseCommandLine(["rights", "set"]), UsageError);
  assert.throws(() => parseCommandLine(["rights"]), /'rights' needs a subcommand/);
  assert.throws(() => parseCommandLine(["rights", "drop"]), /unknown command 'rights drop'/);
});

Deno.test("parseCommandLine() reads 'sigma convert'", () => {
  assert.deepEqual(
    parseCommandLine([
      "sigma",
      "convert",
      "a.yml",
      "b.yml",
      "--target",
      "graph",
      "--mapping",
      "m.json",
    ]),
    { kind: "sigma convert", files: ["a.yml", "b.yml"], target: "graph", mappings: ["m.json"] },
  );
  assert.throws(() => parseCommandLine(["sigma", "convert"]), /at least one rule file/);
  assert.throws(() => parseCommandLine(["sigma", "convert", "a.yml", "--x"]), UsageError);
  assert.throws(() => parseCommandLine(["sigma"]), /'sigma' needs a subcommand/);
});
