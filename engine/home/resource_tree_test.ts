import assert from "node:assert/strict";
import { join } from "node:path";
import { FsResourceTree, PathError } from "./resource_tree.ts";
import { ensureHome } from "./layout.ts";
import type { User } from "./users.ts";

const alice: User = { name: "alice", groups: [], admin: false };
const tree = new FsResourceTree("/home/trawl/data");

const HOSTILE: readonly string[] = [
  // plain traversal
  "..",
  "/..",
  "/users/..",
  "/users/alice/../bob/x",
  "/shared/../../etc/passwd",
  "../bob/secret.sxt",
  "x/../../..",
  "/shared/./x",
  "./x",
  "/user/..",
  // encoded traversal and separators, single and double encoded
  "/shared/%2e%2e/users/bob",
  "/shared/%2E%2E/x",
  "/shared/%2e/x",
  "/shared/.%2e/x",
  "/shared/%252e%252e/x",
  "/shared/a%2fb",
  "/shared/a%2F..%2Fb",
  "/shared/a%5cb",
  "/shared/a%00b",
  "/shared/%0a",
  "/shared/%c0%ae%c0%ae/x",
  "/shared/%e0%80%ae",
  "/shared/%25%32%65%25%32%65",
  // backslashes, NUL and control characters
  "/shared\\..\\etc",
  "\\shared\\x",
  "/shared/a\u0000b",
  "/shared/a\nb",
  "/shared/a\tb",
  "/shared/a\u007fb",
  // empty segments
  "/shared//x",
  "//shared/x",
  "/shared/x//",
  "",
  // absolute host paths and unknown roots
  "/etc/passwd",
  "/home/x",
  "/root/.ssh/id_rsa",
  "/proc/self/environ",
  "/data/users",
  "/usr",
  // Windows drives, home expansion
  "C:\\Windows\\system.ini",
  "C:/Windows/system.ini",
  "c:x",
  "~",
  "~/x",
  "/shared/~root",
  // sizes
  "/shared/" + "a".repeat(256),
  "/shared/" + "é".repeat(128),
  "/shared/" + "a/".repeat(2100) + "x",
];

Deno.test("resolve() refuses every hostile path with a PathError naming it", () => {
  assert.ok(HOSTILE.length >= 25);
  for (const path of HOSTILE) {
    assert.throws(
      () => tree.resolve(alice, path, "/shared/logs"),
      (e: unknown) => e instanceof PathError && e.message.startsWith("path '"),
      JSON.stringify(path),
    );
  }
});

Deno.test("resolve() refuses a relative path that a long working directory makes too long", () => {
  const workDir = "/shared/" + "d/".repeat(2040) + "d";
  assert.throws(() => tree.resolve(alice, "a/".repeat(20) + "x", workDir), PathError);
});

Deno.test("resolve() refuses a relative working directory or a hostile one", () => {
  assert.throws(() => tree.resolve(alice, "x", "shared"), /working directory/);
  assert.throws(() => tree.resolve(alice, "x", "/shared/../etc"), PathError);
});

Deno.test("resolve() maps legal paths to their canonical and host paths", () => {
  const cases: [string, string | undefined, string][] = [
    ["/shared/logs/a.log", undefined, "/shared/logs/a.log"],
    ["/user/t.sxt", undefined, "/users/alice/t.sxt"],
    ["/user", undefined, "/users/alice"],
    ["/users/bob/x", undefined, "/users/bob/x"],
    ["/system/views/", undefined, "/system/views"],
    ["/", undefined, "/"],
    ["t.sxt", undefined, "/users/alice/t.sxt"],
    ["a/b.log", "/shared/logs", "/shared/logs/a/b.log"],
    ["x", "/user/dir", "/users/alice/dir/x"],
    ["user/x", "/shared", "/shared/user/x"],
    ["/shared/100%.log", undefined, "/shared/100%.log"],
    ["/shared/a%20b", undefined, "/shared/a%20b"],
    ["/shared/50%-off%41", undefined, "/shared/50%-off%41"],
    ["/shared/%C3%A9t%C3%A9", undefined, "/shared/%C3%A9t%C3%A9"],
    ["/shared/..x/x..", undefined, "/shared/..x/x.."],
    ["/shared/backup~", undefined, "/shared/backup~"],
    ["/shared/Grüße.log", undefined, "/shared/Grüße.log"],
    ["/shared/" + "a".repeat(255), undefined, "/shared/" + "a".repeat(255)],
  ];
  for (const [path, workDir, canonical] of cases) {
    const r = tree.resolve(alice, path, workDir);
    assert.equal(r.canonical, canonical, path);
    const real = canonical === "/" ? "/home/trawl/data" : join("/home/trawl/data", canonical);
    assert.equal(r.real, real, path);
  }
});

Deno.test("realPath() follows links inside the tree and refuses one leading out", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-tree-" });
  try {
    const home = await ensureHome(dir);
    const outside = join(dir, "outside");
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(outside, "secret"), "s");
    await Deno.writeTextFile(join(home.dataDir, "shared", "a.log"), "a");
    await Deno.symlink(outside, join(home.dataDir, "shared", "escape"));
    await Deno.symlink("/etc/passwd", join(home.dataDir, "shared", "passwd"));
    await Deno.symlink(join(home.dataDir, "shared", "a.log"), join(home.dataDir, "shared", "b"));
    const fs = new FsResourceTree(home.dataDir);

    const inside = await fs.realPath(fs.resolve(alice, "/shared/b"));
    assert.equal(inside, await Deno.realPath(join(home.dataDir, "shared", "a.log")));
    assert.equal(await fs.realPath(fs.resolve(alice, "/")), await Deno.realPath(home.dataDir));
    for (const path of ["/shared/escape", "/shared/escape/secret", "/shared/passwd"]) {
      await assert.rejects(() => fs.realPath(fs.resolve(alice, path)), /leads out of the tree/);
    }
    await assert.rejects(
      () => fs.realPath(fs.resolve(alice, "/shared/none")),
      Deno.errors.NotFound,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("may() applies the defaults and the grants through the tree", () => {
  const fs = new FsResourceTree("/x", {
    grants: () => [{ path: "/shared/team", user: "alice", rights: ["write"] }],
  });
  assert.ok(fs.may(alice, "write", "/shared/team/a"));
  assert.ok(!fs.may(alice, "write", "/shared/other"));
  assert.ok(fs.may(alice, "create", "/users/alice/x"));
});
