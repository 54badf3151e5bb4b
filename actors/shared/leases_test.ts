import assert from "node:assert/strict";
import { Lease, LeaseWatch } from "./leases.ts";
import { memoryStorage } from "../test_support.ts";

Deno.test("a lease renewed is noticed: a live server is never taken for dead, however long it lives", () => {
  const watch = new LeaseWatch(1000);
  assert.equal(watch.dead("s", "v1", 0), false);
  assert.equal(watch.dead("s", "v2", 900), false);
  assert.equal(watch.dead("s", "v3", 1800), false);
  // Seen unchanged, but not for longer than the lease since it last changed.
  assert.equal(watch.dead("s", "v3", 2700), false);
  assert.equal(watch.dead("s", "v4", 5000), false);
});

Deno.test("a lease unchanged for exactly cluster.lease is alive; one tick more and its server is dead, then forgotten", () => {
  const watch = new LeaseWatch(1000);
  assert.equal(watch.dead("s", "v1", 0), false);
  assert.equal(watch.dead("s", "v1", 1000), false);
  assert.equal(watch.dead("s", "v1", 1001), true);
  // Forgotten once found dead: seen afresh from now.
  assert.equal(watch.size, 0);
  assert.equal(watch.dead("s", "v1", 1002), false);
});

Deno.test("a server with no lease at all (null) is dead once cluster.lease goes by; a lease that appears is noticed", () => {
  const watch = new LeaseWatch(100);
  assert.equal(watch.dead("s", null, 0), false);
  assert.equal(watch.dead("s", "v1", 150), false);
  assert.equal(watch.dead("t", null, 0), false);
  assert.equal(watch.dead("t", null, 101), true);
});

Deno.test("keepOnly forgets the servers that hold no slot any more, and only those", () => {
  const watch = new LeaseWatch(100);
  watch.dead("a", "v", 0);
  watch.dead("b", "v", 0);
  watch.keepOnly(new Set(["a"]));
  assert.equal(watch.size, 1);
  // a is still watched since 0 (dead after the lease); b starts afresh.
  assert.equal(watch.dead("a", "v", 101), true);
  assert.equal(watch.dead("b", "v", 101), false);
});

Deno.test("a renewed lease has a new version; a removed one has none", async () => {
  await using storage = await memoryStorage();
  let now = 0;
  const lease = new Lease(storage, "s1", 1000, () => now);
  assert.equal(await lease.version("s1"), null);
  await lease.renew();
  const first = await lease.version("s1");
  assert.notEqual(first, null);
  now = 10;
  await lease.renew();
  assert.notEqual(await lease.version("s1"), first);
  await lease.remove();
  assert.equal(await lease.version("s1"), null);
});
