/**
 * What every backend of engine/contracts/storage.ts must do. A backend's test calls
 * `runStorageContract(name, { newStorage })`, which registers one Deno test per clause.
 */

import { strict as assert } from "node:assert";
import {
  MAX_COMMIT_KEYS,
  type Storage,
  StorageError,
  type StorageKey,
} from "../../engine/contracts/storage.ts";

export interface ContractSubject {
  /** A fresh, empty storage; closed by the test. */
  newStorage(): Promise<Storage>;
}

const text = (s: string) => new TextEncoder().encode(s);
const read = (v: Uint8Array | undefined) => new TextDecoder().decode(v);

/** Bytes that differ at every position, so a chunk out of place shows. */
function bytes(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

async function keys(storage: Storage, prefix: StorageKey): Promise<string[]> {
  const out: string[] = [];
  for await (const key of storage.list(prefix)) out.push(key.join("/"));
  return out;
}

export function runStorageContract(name: string, subject: ContractSubject): void {
  const clause = (what: string, body: (s: Storage) => Promise<void>) =>
    Deno.test(`${name} storage: ${what}`, async () => {
      const storage = await subject.newStorage();
      try {
        await body(storage);
      } finally {
        await storage.close();
      }
    });

  clause("a missing key has no value and no version", async (s) => {
    assert.equal(await s.get(["conf", "none.json"]), null);
    assert.equal(await s.version(["conf", "none.json"]), null);
  });

  clause("a value put is read back with the version the put returned", async (s) => {
    const put = await s.put(["conf", "users.json"], text("{}"));
    assert.ok(put.ok);
    const got = await s.get(["conf", "users.json"]);
    assert.equal(read(got?.value), "{}");
    assert.equal(got?.version, put.version);
    assert.equal(await s.version(["conf", "users.json"]), put.version);
  });

  clause("every write changes the version, even with the same bytes", async (s) => {
    const first = await s.put(["a"], text("x"));
    const second = await s.put(["a"], text("x"));
    assert.ok(first.ok && second.ok);
    assert.notEqual(first.version, second.version);
  });

  clause(
    "a put with the current version succeeds and one with a stale version is refused",
    async (s) => {
      const first = await s.put(["doc"], text("one"));
      assert.ok(first.ok);
      const second = await s.put(["doc"], text("two"), { expectedVersion: first.version });
      assert.ok(second.ok);
      const stale = await s.put(["doc"], text("three"), { expectedVersion: first.version });
      assert.deepEqual(stale, { ok: false, conflict: ["doc"] });
      assert.equal(read((await s.get(["doc"]))?.value), "two");
    },
  );

  clause("an expected version of null creates only a key that does not exist", async (s) => {
    assert.ok((await s.put(["new"], text("1"), { expectedVersion: null })).ok);
    const again = await s.put(["new"], text("2"), { expectedVersion: null });
    assert.equal(again.ok, false);
    assert.equal(read((await s.get(["new"]))?.value), "1");
  });

  clause("of two concurrent writers expecting one version exactly one wins", async (s) => {
    const base = await s.put(["race"], text("base"));
    assert.ok(base.ok);
    const results = await Promise.all(
      ["a", "b", "c", "d"].map((who) =>
        s.put(["race"], text(who), { expectedVersion: base.version })
      ),
    );
    const winners = results.filter((r) => r.ok);
    assert.equal(winners.length, 1);
    const value = read((await s.get(["race"]))?.value);
    assert.equal(value, ["a", "b", "c", "d"][results.indexOf(winners[0]!)]);
  });

  clause("delete removes a key, and with a stale version it is refused", async (s) => {
    const put = await s.put(["gone"], text("x"));
    assert.ok(put.ok);
    await s.put(["gone"], text("y"));
    assert.equal((await s.delete(["gone"], { expectedVersion: put.version })).ok, false);
    assert.ok((await s.delete(["gone"])).ok);
    assert.equal(await s.get(["gone"]), null);
    assert.ok((await s.delete(["gone"])).ok, "deleting a missing key is a success");
  });

  clause("list yields the keys under a prefix in order, not the prefix's neighbours", async (s) => {
    for (const key of [["t", "b", "2"], ["t", "a"], ["t", "b", "1"], ["u", "x"], ["tt"]]) {
      await s.put(key, text("v"));
    }
    assert.deepEqual(await keys(s, ["t"]), ["t/a", "t/b/1", "t/b/2"]);
    assert.deepEqual(await keys(s, ["t", "b"]), ["t/b/1", "t/b/2"]);
    assert.deepEqual(await keys(s, ["none"]), []);
  });

  for (const size of [0, 65_536, 300_001, 2 * 1024 * 1024 + 7]) {
    clause(`a value of ${size} bytes comes back byte for byte`, async (s) => {
      const value = bytes(size, size + 1);
      assert.ok((await s.put(["big"], value)).ok);
      const got = await s.get(["big"]);
      assert.equal(got?.value.length, size);
      assert.ok(got!.value.every((b, i) => b === value[i]));
    });
  }

  clause("replacing a large value by another leaves only the new one", async (s) => {
    await s.put(["big"], bytes(500_000, 1));
    await s.put(["big"], bytes(200_000, 2));
    const got = await s.get(["big"]);
    assert.deepEqual(got?.value, bytes(200_000, 2));
  });

  clause("a reader during rewrites of a large value sees one whole value each time", async (s) => {
    const versions = [bytes(400_000, 1), bytes(400_000, 2), bytes(400_000, 3)];
    await s.put(["table"], versions[0]!);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 6; i++) await s.put(["table"], versions[(i + 1) % 3]!);
      writing = false;
    })();
    let reads = 0;
    while (writing || reads === 0) {
      const got = await s.get(["table"]);
      assert.ok(
        versions.some((v) =>
          v.length === got?.value.length && v.every((b, i) => b === got.value[i])
        ),
      );
      reads++;
    }
    await writer;
  });

  clause("a commit writes all its keys or, on one stale version, none", async (s) => {
    const a = await s.put(["c", "a"], text("a0"));
    await s.put(["c", "b"], text("b0"));
    assert.ok(a.ok);
    await s.put(["c", "a"], text("a1")); // a's version moves on
    const refused = await s.commit([
      { key: ["c", "b"], value: text("b1") },
      { key: ["c", "a"], value: text("a2"), expectedVersion: a.version },
      { key: ["c", "new"], value: bytes(100_000) },
    ]);
    assert.deepEqual(refused, { ok: false, conflict: ["c", "a"] });
    assert.equal(read((await s.get(["c", "b"]))?.value), "b0");
    assert.equal(await s.get(["c", "new"]), null);
    const done = await s.commit([
      { key: ["c", "b"], value: text("b1") },
      { key: ["c", "a"], value: null },
      { key: ["c", "new"], value: bytes(100_000) },
    ]);
    assert.ok(done.ok);
    assert.deepEqual(await keys(s, ["c"]), ["c/b", "c/new"]);
  });

  clause("bad keys and oversized commits are StorageErrors naming the problem", async (s) => {
    for (const key of [[], [""], [".."], ["a/b"], [".hidden"], ["x\0"]]) {
      await assert.rejects(() => s.put(key, text("v")), StorageError);
    }
    const many = Array.from({ length: MAX_COMMIT_KEYS + 1 }, (_, i) => ({
      key: [`k${i}`],
      value: text("v"),
    }));
    await assert.rejects(() => s.commit(many), /at most 10 keys/);
    await assert.rejects(
      () => s.commit([{ key: ["k"], value: text("1") }, { key: ["k"], value: text("2") }]),
      /names 'k' twice/,
    );
  });

  /** Every piece of a stream, joined. */
  const drain = async (pieces: AsyncIterable<Uint8Array>) => {
    const parts: Uint8Array[] = [];
    for await (const piece of pieces) parts.push(piece.slice());
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) out.set(p, (at += p.length) - p.length);
    return out;
  };

  clause("a value streamed from any offset is the value's bytes from there", async (s) => {
    assert.equal(await s.stream(["none"]), null);
    const large = bytes(200_001, 7); // several chunks of a KV, the last one short
    const put = await s.put(["big"], large);
    assert.ok(put.ok);
    await s.put(["small"], text("hello"));
    for (
      const from of [0, 1, 59_999, 60_000, 60_001, 120_000, 199_999, 200_000, 200_001, 300_000]
    ) {
      const got = await s.stream(["big"], from);
      assert.equal(got?.size, large.length);
      assert.equal(got?.version, put.version);
      assert.deepEqual(await drain(got!.pieces), large.subarray(from), `from ${from}`);
    }
    assert.equal(read(await drain((await s.stream(["small"], 2))!.pieces)), "llo");
  });

  clause(
    "a stream stopped early or outlived by a rewrite never gives bytes of two versions",
    async (s) => {
      const first = bytes(200_001, 1);
      await s.put(["v"], first);
      const got = (await s.stream(["v"]))!;
      const it = got.pieces[Symbol.asyncIterator]();
      const head = (await it.next()).value as Uint8Array;
      const seen = [head.slice()];
      await s.put(["v"], bytes(200_001, 2));
      // The rest is the first version's, or the read fails saying the value was replaced.
      try {
        for (let n = await it.next(); !n.done; n = await it.next()) seen.push(n.value.slice());
        assert.deepEqual(
          await drain((async function* () {
            yield* seen;
          })()),
          first,
        );
      } catch (e) {
        assert.ok(e instanceof StorageError, String(e));
        assert.match(e.message, /replaced while being read/);
      }
      // Stopping early releases what it held: the key is written and read again at once.
      const again = (await s.stream(["v"]))!;
      for await (const _ of again.pieces) break;
      await s.put(["v"], text("done"));
      assert.equal(read((await s.get(["v"]))?.value), "done");
    },
  );
}
