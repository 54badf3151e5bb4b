import assert from "node:assert/strict";
import { join } from "node:path";
import { USERS_KEY, UserStore, UserStoreError } from "./user_store.ts";
import { KvStorage } from "./storage/kv_storage.ts";
import { StorageError } from "../engine/contracts/storage.ts";
import { hashToken, newToken, sameHash, TOKEN_PATTERN } from "./tokens.ts";
import { ensureHome } from "./layout.ts";

async function withHome(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-users-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("newToken() makes distinct trawl_ tokens of 32 random bytes", () => {
  const a = newToken();
  const b = newToken();
  assert.match(a, TOKEN_PATTERN);
  assert.notEqual(a, b);
  assert.equal(a.length, "trawl_".length + 43);
});

Deno.test("sameHash() compares hashes, refusing different or empty ones", () => {
  const h = hashToken("trawl_x");
  assert.ok(sameHash(h, hashToken("trawl_x")));
  assert.ok(!sameHash(h, hashToken("trawl_y")));
  assert.ok(!sameHash("", ""));
  assert.ok(!sameHash(h, h.slice(2)));
});

Deno.test("UserStore adds users whose token authenticates them; the file has only hashes", () => {
  return withHome(async (dir) => {
    const home = await ensureHome(dir);
    const store = UserStore.forHome(home);
    assert.equal(await store.exists(), false);
    const token = await store.add("alice", { groups: ["sec", "ops"], timeZone: "Europe/Berlin" });
    const admin = await store.add("root", { admin: true });
    assert.equal(await store.exists(), true);
    assert.deepEqual(await store.authenticate(token), {
      name: "alice",
      groups: ["sec", "ops"],
      admin: false,
      timeZone: "Europe/Berlin",
    });
    assert.deepEqual(await store.authenticate(admin), { name: "root", groups: [], admin: true });
    assert.equal(await store.authenticate(newToken()), undefined);
    assert.equal(await store.authenticate("not-a-token"), undefined);
    assert.equal(await store.authenticate(""), undefined);

    const text = await Deno.readTextFile(home.usersFile);
    assert.ok(!text.includes(token) && !text.includes(admin));
    assert.ok(text.includes(hashToken(token)));
    assert.equal((await Deno.stat(home.usersFile)).mode! & 0o777, 0o600);
    assert.ok((await Deno.stat(join(home.dataDir, "users", "alice"))).isDirectory);
    assert.deepEqual((await store.list()).map((u) => u.name), ["alice", "root"]);
  });
});

Deno.test("UserStore refuses bad names, zones, duplicates and unknown users", () => {
  return withHome(async (dir) => {
    const store = new UserStore(join(dir, "users.json"));
    await store.add("bob");
    const refusals: [() => Promise<unknown>, RegExp][] = [
      [() => store.add("bob"), /already exists/],
      [() => store.add(".."), /user name '..' is not valid/],
      [() => store.add("."), /not valid/],
      [() => store.add("a/b"), /not valid/],
      [() => store.add(""), /not valid/],
      [() => store.add("x".repeat(65)), /not valid/],
      [() => store.add("bob."), /not valid/],
      [() => store.add("carl", { groups: ["no space"] }), /group name 'no space'/],
      [() => store.add("carl", { timeZone: "Mars/Base" }), /time zone 'Mars\/Base'/],
      [() => store.remove("nobody"), /no user 'nobody'/],
      [() => store.replaceToken("nobody"), /no user 'nobody'/],
    ];
    for (const [run, message] of refusals) {
      await assert.rejects(run, (e) => e instanceof UserStoreError && message.test(e.message));
    }
  });
});

Deno.test("UserStore.remove() and replaceToken() revoke the old token", () => {
  return withHome(async (dir) => {
    const store = new UserStore(join(dir, "users.json"));
    const bob = await store.add("bob");
    const carl = await store.add("carl");
    const bob2 = await store.replaceToken("bob");
    assert.equal(await store.authenticate(bob), undefined);
    assert.equal((await store.authenticate(bob2))?.name, "bob");
    await store.remove("carl");
    assert.equal(await store.authenticate(carl), undefined);
    assert.deepEqual((await store.list()).map((u) => u.name), ["bob"]);
  });
});

Deno.test("UserStore sees changes another store (the CLI) made to the file", () => {
  return withHome(async (dir) => {
    const file = join(dir, "users.json");
    const server = new UserStore(file);
    const cli = new UserStore(file);
    assert.equal(await server.authenticate(newToken()), undefined); // loads the missing file
    const token = await cli.add("dora");
    assert.equal((await server.authenticate(token))?.name, "dora");
    const token2 = await cli.replaceToken("dora");
    assert.equal(await server.authenticate(token), undefined);
    assert.equal((await server.authenticate(token2))?.name, "dora");
    await cli.remove("dora");
    assert.equal(await server.authenticate(token2), undefined);
  });
});

Deno.test("UserStore names the file when it is corrupt", () => {
  return withHome(async (dir) => {
    const file = join(dir, "users.json");
    await Deno.writeTextFile(file, "{");
    await assert.rejects(() => new UserStore(file).list(), /users.json is not valid JSON/);
    await Deno.writeTextFile(file, JSON.stringify({ users: [{ name: "x" }] }));
    await assert.rejects(() => new UserStore(file).list(), /not a valid users file: users.0/);
  });
});

Deno.test("a corrupt users document in a KV is a StorageError naming it, without a host path", () => {
  return withHome(async (dir) => {
    const kv = await Deno.openKv(join(dir, "state.kv"));
    try {
      const storage = new KvStorage(kv, "state.kv");
      const users = new UserStore(storage);
      for (
        const [value, problem] of [
          ["{ broken", /^the users document conf\/users\.json is not valid JSON \(.+\); repair it/],
          [
            JSON.stringify({ users: [{ name: "x" }] }),
            /^the users document conf\/users\.json is not a valid users file \(users\.0\./,
          ],
        ] as const
      ) {
        await storage.put(USERS_KEY, new TextEncoder().encode(value));
        await assert.rejects(() => users.authenticate(newToken()), (e: Error) => {
          assert.ok(e instanceof StorageError, String(e));
          assert.match(e.publicMessage, problem);
          assert.ok(!e.publicMessage.includes(dir), e.publicMessage);
          return true;
        });
      }
    } finally {
      kv.close();
    }
  });
});
