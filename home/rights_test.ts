import assert from "node:assert/strict";
import { type Grant, may, parseRights, RIGHTS } from "./rights.ts";
import { RightsFile } from "./rights_file.ts";
import type { User } from "../engine/contracts/user.ts";

const alice: User = { name: "alice", groups: ["sec"], admin: false };
const bob: User = { name: "bob", groups: [], admin: false };
const root: User = { name: "root", groups: [], admin: true };

const grants: Grant[] = parseRights(JSON.stringify([
  { path: "/shared/team", user: "bob", rights: ["write", "create"] },
  { path: "/users/carol/reports/", group: "sec", rights: ["read", "list"] },
  { path: "/system/views", user: "bob", rights: ["read"] },
]));

Deno.test("may() gives a user every right in their own folder and none in another's", () => {
  for (const right of RIGHTS) {
    assert.ok(may(alice, right, "/users/alice", []), right);
    assert.ok(may(alice, right, "/users/alice/deep/x.sxt", []), right);
    assert.ok(!may(alice, right, "/users/bob/x", []), right);
    assert.ok(!may(alice, right, "/users/alicex", []), right);
  }
});

Deno.test("may() lets everyone list, execute and read /shared, and list and execute /system", () => {
  assert.ok(may(bob, "list", "/shared", []));
  assert.ok(may(bob, "read", "/shared/logs/a.log", []));
  assert.ok(may(bob, "execute", "/shared/logs", []));
  assert.ok(!may(bob, "write", "/shared/logs/a.log", []));
  assert.ok(!may(bob, "create", "/shared", []));
  assert.ok(may(bob, "list", "/system/x", []));
  assert.ok(may(bob, "execute", "/system/x", []));
  assert.ok(!may(bob, "read", "/system/x", []));
  assert.ok(!may(bob, "write", "/system", []));
  assert.ok(may(bob, "list", "/", []));
  assert.ok(!may(bob, "list", "/users", []));
});

Deno.test("may() lets admins do everything everywhere", () => {
  for (const right of RIGHTS) {
    for (const path of ["/", "/users", "/users/bob/x", "/system/y", "/shared/z"]) {
      assert.ok(may(root, right, path, []), `${right} ${path}`);
    }
  }
});

Deno.test("may() applies user grants to the path and everything below, not beside", () => {
  assert.ok(may(bob, "write", "/shared/team", grants));
  assert.ok(may(bob, "create", "/shared/team/a/b/c.sxt", grants));
  assert.ok(!may(bob, "write", "/shared/teamwork", grants));
  assert.ok(!may(bob, "write", "/shared", grants));
  assert.ok(!may(alice, "write", "/shared/team", grants));
  assert.ok(may(bob, "read", "/system/views/v.sx", grants));
  assert.ok(!may(bob, "read", "/system/other", grants));
});

Deno.test("may() applies group grants to members only", () => {
  assert.ok(may(alice, "read", "/users/carol/reports/q1.sxt", grants));
  assert.ok(may(alice, "list", "/users/carol/reports", grants));
  assert.ok(!may(alice, "write", "/users/carol/reports/q1.sxt", grants));
  assert.ok(!may(alice, "read", "/users/carol/private", grants));
  assert.ok(!may(bob, "read", "/users/carol/reports/q1.sxt", grants));
});

Deno.test("parseRights() refuses malformed grants with a message naming the entry", () => {
  const bad: [unknown, RegExp][] = [
    [{}, /expected array/i],
    [[{ path: "/shared", rights: ["read"] }], /exactly one of 'user' and 'group'/],
    [[{ path: "/shared", user: "a", group: "b", rights: ["read"] }], /exactly one/],
    [[{ path: "/etc", user: "a", rights: ["read"] }], /canonical path/],
    [[{ path: "/shared/../users", user: "a", rights: ["read"] }], /canonical path/],
    [[{ path: "/shared", user: "a", rights: ["delete"] }], /entry 0.rights.0/],
    [[{ path: "/shared", user: "a b", rights: ["read"] }], /user name/],
    [[{ path: "/shared", user: "a", rights: ["read"], extra: 1 }], /extra/],
  ];
  for (const [json, message] of bad) {
    assert.throws(() => parseRights(JSON.stringify(json)), message, JSON.stringify(json));
  }
  assert.throws(() => parseRights("[", "conf/rights.json"), /conf\/rights.json is not valid JSON/);
});

Deno.test("RightsFile reads conf/rights.json, and none when it is missing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-rights-" });
  try {
    const file = `${dir}/rights.json`;
    const errors: Error[] = [];
    const rights = new RightsFile(file, (e) => errors.push(e));
    assert.deepEqual(rights.load(), []);
    await Deno.writeTextFile(file, JSON.stringify([{ path: "/", user: "bob", rights: ["read"] }]));
    assert.deepEqual(rights.load(), [{ path: "/", user: "bob", rights: ["read"] }]);
    await Deno.writeTextFile(file, "not json");
    assert.throws(() => rights.load(), /not valid JSON/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("RightsFile sees a changed file and keeps the last good grants on a bad one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-rights-" });
  try {
    const file = `${dir}/rights.json`;
    const errors: Error[] = [];
    let now = 0;
    const rights = new RightsFile(file, (e) => errors.push(e), () => now);
    const grant = { path: "/shared/a", group: "g", rights: ["write"] };
    await Deno.writeTextFile(file, JSON.stringify([grant]));
    assert.deepEqual(rights.grants(), [grant]);
    await Deno.writeTextFile(file, "[]");
    now += 249;
    assert.deepEqual(rights.grants(), [grant], "not stat'ed again within 250 ms");
    await Deno.writeTextFile(file, "[{]");
    now += 1;
    assert.deepEqual(rights.grants(), [grant]);
    assert.equal(errors.length, 1);
    now += 250;
    assert.deepEqual(rights.grants(), [grant]);
    assert.equal(errors.length, 1, "a bad file is reported once");
    await Deno.writeTextFile(file, "[]");
    now += 250;
    assert.deepEqual(rights.grants(), []);
    assert.equal(errors.length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("may() lets only admins write or create in /system/datastores, whatever the grants", () => {
  const wide = parseRights(JSON.stringify([
    { path: "/", user: "bob", rights: ["write", "create", "read"] },
    { path: "/system", group: "sec", rights: ["write", "create"] },
    { path: "/system/datastores", user: "bob", rights: ["write", "create"] },
  ]));
  for (const right of ["write", "create"] as const) {
    for (const path of ["/system/datastores", "/system/datastores/logs.json"]) {
      assert.ok(!may(bob, right, path, wide), `${right} ${path}`);
      assert.ok(!may(alice, right, path, wide), `${right} ${path}`);
      assert.ok(may(root, right, path, wide), `${right} ${path}`);
    }
    // Beside it the grants still hold.
    assert.ok(may(bob, right, "/system/views/v.sx", wide));
    assert.ok(may(alice, right, "/system/datastores2/x", wide));
  }
  // Nobody reads a definition (it may hold a secret) without a grant; everyone may list.
  assert.ok(!may(alice, "read", "/system/datastores/logs.json", []));
  assert.ok(may(alice, "list", "/system/datastores", []));
  assert.ok(may(bob, "read", "/system/datastores/logs.json", wide));
});
