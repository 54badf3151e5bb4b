import assert from "node:assert/strict";
import { ConnectorPool, storeKey, tenantKey } from "./connector_pool.ts";
import type { BucketKeys } from "../connectors/cloudapi/pacer.ts";

const TENANT = "contoso.onmicrosoft.com";
const FAST = { limit: 1_000, unitMs: 1_000 };

/** Does `p` settle within `ms`? */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let t: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => t = setTimeout(() => r(false), ms));
  const done = await Promise.race([p.then(() => true), late]);
  clearTimeout(t);
  return done;
}

Deno.test("a slow store's limit never slows another store of the same tenant", async () => {
  const pool = new ConnectorPool();
  const stop = new AbortController();
  try {
    const slow: BucketKeys = {
      tenant: TENANT,
      family: "directory",
      providerLimit: FAST,
      store: "slow",
    };
    const keys: BucketKeys = { ...slow, storeLimit: { limit: 1, unitMs: 60_000 } };
    await pool.acquire(keys, stop.signal);
    const blocked = pool.acquire(keys, stop.signal);
    assert.equal(await settlesWithin(blocked, 100), false, "the slow store waits for its unit");
    const fast: BucketKeys = { ...slow, store: "fast" };
    for (let i = 0; i < 20; i++) {
      assert.ok(await settlesWithin(pool.acquire(fast, stop.signal), 500), `token ${i}`);
    }
    assert.deepEqual(pool.limitOf(tenantKey(TENANT, "graph")), FAST);
    blocked.catch(() => {});
  } finally {
    stop.abort();
    pool.stop();
  }
});

Deno.test("the provider's limit is shared by every store of a tenant", async () => {
  const pool = new ConnectorPool();
  const stop = new AbortController();
  try {
    const provider = { limit: 2, unitMs: 60_000 };
    const a = { tenant: TENANT, family: "suite", providerLimit: provider, store: "a" } as const;
    const b = { ...a, store: "b" } as const;
    await pool.acquire(a, stop.signal);
    await pool.acquire(b, stop.signal);
    const third = pool.acquire(a, stop.signal);
    assert.equal(await settlesWithin(third, 100), false);
    third.catch(() => {});
    // Another tenant has a bucket of its own.
    const other = { ...a, tenant: "fabrikam.onmicrosoft.com" } as const;
    assert.ok(await settlesWithin(pool.acquire(other, stop.signal), 500));
  } finally {
    stop.abort();
    pool.stop();
  }
});

Deno.test("a store's changed limit applies to its next request, up as well as down", async () => {
  const pool = new ConnectorPool();
  const stop = new AbortController();
  try {
    const base = { tenant: TENANT, family: "activity", providerLimit: FAST, store: "s" } as const;
    await pool.acquire({ ...base, storeLimit: { limit: 1, unitMs: 60_000 } }, stop.signal);
    assert.deepEqual(pool.limitOf(storeKey("s", "activity")), { limit: 1, unitMs: 60_000 });
    const raised = { ...base, storeLimit: { limit: 50, unitMs: 1_000 } };
    assert.ok(await settlesWithin(pool.acquire(raised, stop.signal), 500));
    assert.deepEqual(pool.limitOf(storeKey("s", "activity")), { limit: 50, unitMs: 1_000 });
  } finally {
    stop.abort();
    pool.stop();
  }
});
