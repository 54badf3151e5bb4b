import assert from "node:assert/strict";
import { join } from "node:path";
import { RIGHTS_KEY, StorageRights } from "./rights_file.ts";
import { RightsError } from "./rights.ts";
import { KvStorage } from "./storage/kv_storage.ts";
import { sleep } from "../engine/util/sleep.ts";

const text = (s: string) => new TextEncoder().encode(s);

/** Waits (up to 20 s: the machine may be loaded) until `done()`. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await sleep(50);
}

/** `storage` with its version reads counted: one per check of the rights document. */
function countingChecks(storage: KvStorage): { storage: KvStorage; checks: () => number } {
  let checks = 0;
  const counted = new Proxy(storage, {
    get(target, name) {
      if (name === "version") {
        return (key: Parameters<KvStorage["version"]>[0]) => {
          checks++;
          return target.version(key);
        };
      }
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage: counted, checks: () => checks };
}

Deno.test("StorageRights: a change through another writer holds within the check period; a bad document is reported once and the grants stay", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-rights-" });
  const file = join(dir, "state.kv");
  const mine = new KvStorage(await Deno.openKv(file), "test KV");
  const other = new KvStorage(await Deno.openKv(file), "test KV");
  const errors: Error[] = [];
  const { storage, checks } = countingChecks(mine);
  const rights = new StorageRights(storage, (e) => errors.push(e));
  try {
    assert.deepEqual(await rights.load(), []);
    const grant = { path: "/shared/team", user: "bob", rights: ["write"] };
    await other.put(RIGHTS_KEY, text(JSON.stringify([grant])));
    // The check under way when it was written may have read the version before: the next sees it.
    const checksBefore = checks();
    await until(() => rights.grants().length === 1);
    assert.deepEqual(rights.grants(), [grant]);
    assert.ok(checks() - checksBefore <= 2, `seen after ${checks() - checksBefore} checks`);

    await other.put(RIGHTS_KEY, text(`[{"path": "/etc", "user": "bob", "rights": ["write"]}]`));
    await until(() => errors.length > 0);
    // Several more checks: the same bad version is not reported again.
    const reported = checks();
    await until(() => checks() >= reported + 4);
    assert.deepEqual(rights.grants(), [grant], "the previous grants stay");
    assert.equal(errors.length, 1, errors.map((e) => e.message).join("\n"));
    assert.ok(errors[0] instanceof RightsError);
    assert.match(errors[0].message, /conf\/rights\.json/);

    // A bad document at start stops it.
    const starting = new StorageRights(other);
    await assert.rejects(() => starting.load(), RightsError);
    starting.stop();
  } finally {
    rights.stop();
    mine.close();
    other.close();
    await Deno.remove(dir, { recursive: true });
  }
});
