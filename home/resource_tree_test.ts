import assert from "node:assert/strict";
import { join } from "node:path";
import { FsResourceTree } from "./resource_tree.ts";
import { PathError } from "../engine/contracts/resource_path.ts";
import { ensureHome } from "./layout.ts";
import type { User } from "../engine/contracts/user.ts";

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
  // more encodings: double-encoded NUL and slash, overlong and invalid UTF-8 escapes
  "/shared/a%2500b",
  "/shared/a%252fb",
  "/shared/%c0%af",
  "/shared/%ff%fe",
  "/shared/%2e%2e%2f%2e%2e",
  // look-alike dots and slashes that compatibility normalisation folds into `..` and `/`
  "/shared/\uff0e\uff0e/users/bob",
  "/shared/\uff0e",
  "/shared/\u2025",
  "/shared/\u2024\u2024",
  "/shared/\ufe52\ufe52",
  "/shared/%EF%BC%8E%EF%BC%8E",
  "/shared/a\uff0fb",
  "/shared/a\uff3cb",
  // trailing dots and spaces (dropped by Windows and SMB file systems: `bob.` would be `bob`)
  "/users/bob.",
  "/users/bob /x",
  "/shared/x..",
  "/shared/a.log.",
  "/shared/a\u00a0",
  "/shared/a%20",
  // invisible formatting characters
  "/users/bo\u200bb/x",
  "/shared/\u202egol.exe",
  "/shared/\ufeffx",
  // traversal through one root into another, with or without the alias
  "/shared/../users/bob",
  "/user/../users/bob",
  "/user/../../etc",
  "/users/alice/../../shared",
  // roots are lower case; no other spelling names them
  "/Shared/x",
  "/SHARED/x",
  "/Users/bob",
  "/User/x",
  "/System/datastores",
  // NUL and the text of a NUL escape
  "\u0000",
  "/shared/\u0000",
  "/shared/a\\0b",
  "/shared/%00",
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
    ["/shared/..x/x", undefined, "/shared/..x/x"],
    ["/shared/.hidden", undefined, "/shared/.hidden"],
    ["/shared/%2e%2ex", undefined, "/shared/%2e%2ex"],
    ["/shared/\u3002\u3002", undefined, "/shared/\u3002\u3002"],
    ["/shared/caf\u00e9", undefined, "/shared/caf\u00e9"],
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

Deno.test("realPath() refuses a link into a sibling folder whose name starts with the root's", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-tree-" });
  try {
    const home = await ensureHome(dir);
    // `<home>/data-evil` beside `<home>/data`: its path starts with the root's text.
    const sibling = `${home.dataDir}-evil`;
    await Deno.mkdir(sibling);
    await Deno.writeTextFile(join(sibling, "secret"), "s");
    await Deno.symlink(sibling, join(home.dataDir, "shared", "evil"));
    await Deno.symlink(join(sibling, "secret"), join(home.dataDir, "shared", "secret"));
    const fs = new FsResourceTree(home.dataDir);
    const root: User = { name: "root", groups: [], admin: true };
    for (const path of ["/shared/evil", "/shared/evil/secret", "/shared/secret"]) {
      for (const user of [alice, root]) {
        await assert.rejects(
          () => fs.realPath(fs.resolve(user, path)),
          PathError,
          `${path} for ${user.name}`,
        );
      }
      await assert.rejects(
        () => fs.realTarget(fs.resolve(root, path)),
        /leads out of the tree/,
        path,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resolve() names another user's folder, and may() then refuses it", () => {
  const fs = new FsResourceTree("/x");
  for (const path of ["/users/bob", "/users/bob/x.log", "../bob/x.log"]) {
    const canonical = path.startsWith("/") ? path : undefined;
    if (canonical === undefined) {
      assert.throws(() => fs.resolve(alice, path), PathError);
      continue;
    }
    const r = fs.resolve(alice, path);
    assert.equal(r.canonical, canonical);
    for (const right of ["list", "read", "write", "execute", "create"] as const) {
      assert.ok(!fs.may(alice, right, r.canonical), `${right} ${path}`);
    }
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

Deno.test("realPath() holds the user's rights on where a link really leads", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-tree-" });
  try {
    const home = await ensureHome(dir);
    const data = home.dataDir;
    const at = (path: string) => join(data, ...path.split("/").filter((s) => s !== ""));
    for (const folder of ["/users/alice", "/users/bob", "/shared/logs", "/system/keys"]) {
      await Deno.mkdir(at(folder), { recursive: true });
    }
    await Deno.writeTextFile(at("/users/bob/secret.log"), "bob's");
    await Deno.writeTextFile(at("/system/keys/k.json"), "key");
    await Deno.writeTextFile(at("/shared/logs/a.log"), "a");
    await Deno.symlink(at("/users/bob/secret.log"), at("/users/alice/file"));
    await Deno.symlink(at("/users/bob"), at("/users/alice/bobs"));
    await Deno.symlink(at("/system/keys"), at("/shared/keys"));
    await Deno.symlink(at("/shared/logs"), at("/users/alice/logs"));
    const fs = new FsResourceTree(data);

    for (
      const path of ["/user/file", "/user/bobs", "/user/bobs/secret.log", "/shared/keys/k.json"]
    ) {
      await assert.rejects(
        () => fs.realPath(fs.resolve(alice, path)),
        (e: unknown) => e instanceof PathError && /links to a place where you lack/.test(e.message),
        path,
      );
    }
    // A link to a place the user may read anyway is followed, for reading only.
    const logs = fs.resolve(alice, "/user/logs/a.log");
    assert.equal(await fs.realPath(logs), await Deno.realPath(at("/shared/logs/a.log")));
    await assert.rejects(() => fs.realPath(logs, "write"), /lack the write right/);
    assert.deepEqual(await fs.realTarget(fs.resolve(alice, "/user/bobs/secret.log")), {
      canonical: "/users/bob/secret.log",
      real: await Deno.realPath(at("/users/bob/secret.log")),
    });
    // Bob, and an admin, follow the same links.
    const bob: User = { name: "bob", groups: [], admin: false };
    const admin: User = { name: "root", groups: [], admin: true };
    assert.ok(await fs.realPath(fs.resolve(bob, "/users/bob/secret.log")));
    assert.ok(await fs.realPath(fs.resolve(admin, "/shared/keys/k.json")));
    // Without a user (a path built by hand) only the way out of the tree is refused.
    assert.ok(await fs.realPath({ canonical: "/users/alice/file", real: at("/users/alice/file") }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
