/**
 * The `azblob://` datastore against Azurite (a real Blob service, started by the test), with
 * blobs put there by the official SDK: listing by prefix and glob across pages, Azure's archive
 * layout with path times and from/to, a SAS token store, a wrong key, a blob that vanishes
 * while it is read, and the store's acl.
 */

import assert from "node:assert/strict";
import { ContainerSASPermissions } from "@azure/storage-blob";
import { openAzblobStore } from "../../connectors/azblob/azblob_datastore.ts";
import type { FileEntry, ListOptions, Warning } from "../../engine/contracts/datastore.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import type { User } from "../../engine/contracts/user.ts";
import { type Azurite, DEV_ACCOUNT, DEV_KEY, startAzurite } from "../support/azurite.ts";
import { alice, bob, collect } from "../support/temp_tree.ts";

const code = (c: string) => (e: unknown) => e instanceof QueryError && e.diagnostic.code === c;
const ARCHIVE = "azblob://arch/insights-logs-signinlogs/**/y=$yyyy$/m=$MM$/d=$dd$/h=$HH$/m=00/" +
  "PT1H.json";
const RESOURCE = "tenantId=0f1e2d3c-0000-4000-8000-123456789abc";

function hourBlob(day: number, hour: number): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${RESOURCE}/y=2024/m=05/d=${two(day)}/h=${two(hour)}/m=00/PT1H.json`;
}

function signIn(day: number, hour: number, user: string): string {
  return JSON.stringify({
    time: `2024-05-${String(day).padStart(2, "0")}T${String(hour).padStart(2, "0")}:12:00Z`,
    category: "SignInLogs",
    properties: { userPrincipalName: user, status: { errorCode: 0 } },
  }) + "\n";
}

interface Fixture extends AsyncDisposable {
  readonly az: Azurite;
  /** Stores by name, as their definition files would hold them. */
  readonly stores: Map<string, unknown>;
  open(uri: string, user?: User): ReturnType<typeof openAzblobStore>;
  list(uri: string, extra?: Partial<ListOptions> & { user?: User }): Promise<FileEntry[]>;
  readonly warnings: Warning[];
}

function definition(az: Azurite, extra: Record<string, unknown> = {}) {
  return {
    type: "AZBLOB",
    azblobStore: {
      endpoint: az.endpoint,
      accountName: DEV_ACCOUNT,
      accountKey: DEV_KEY,
      acl: { users: { alice: ["read", "list"], bob: ["read"] }, groups: {} },
      ...extra,
    },
  };
}

async function fixture(options: { rangeBytes?: number } = {}): Promise<Fixture> {
  const az = await startAzurite();
  const stores = new Map<string, unknown>([
    ["logs", definition(az, { container: "logs" })],
    ["arch", definition(az)],
  ]);
  const warnings: Warning[] = [];
  const deps = {
    definitionText: (name: string) =>
      Promise.resolve(stores.has(name) ? JSON.stringify(stores.get(name)) : null),
    backoffMs: 1,
    pageSize: 2, // every listing below takes several pages
    rangeBytes: options.rangeBytes,
  };
  const open = (uri: string, user: User = alice) => openAzblobStore(uri, user, deps);
  return {
    az,
    stores,
    warnings,
    open,
    async list(uri, extra = {}) {
      const store = await open(uri, extra.user ?? alice);
      return await collect(store.list(uri, {
        user: extra.user ?? alice,
        workDir: "/",
        timeZone: "Europe/Berlin", // the store's zone (UTC) counts, not the query's
        signal: new AbortController().signal,
        onWarning: (w) => warnings.push(w),
        ...extra,
      }));
    },
    [Symbol.asyncDispose]: () => az[Symbol.asyncDispose](),
  };
}

async function text(entry: FileEntry): Promise<string> {
  return await new Response(await entry.open(new AbortController().signal)).text();
}

Deno.test("an azblob store lists the blobs a glob matches, across pages, and reads them", async () => {
  await using f = await fixture();
  for (const name of ["app-1.json", "app-2.json", "web-1.json", "sub/app-3.json", "app-4.log"]) {
    await f.az.upload("logs", `web/${name}`, `{"blob":"${name}"}\n`);
  }
  await f.az.upload("logs", "other/app-9.json", "{}\n");
  const apps = await f.list("azblob://logs/web/app-*.json");
  assert.deepEqual(apps.map((e) => e.uri), [
    "azblob://logs/web/app-1.json",
    "azblob://logs/web/app-2.json",
  ]);
  assert.equal(apps[0]!.size, '{"blob":"app-1.json"}\n'.length);
  assert.equal(apps[0]!.pathTime, null);
  assert.ok(Math.abs(apps[0]!.modified - Date.now()) < 60_000);
  assert.equal(await text(apps[1]!), '{"blob":"app-2.json"}\n');
  const deep = await f.list("azblob://logs/web/**/app-?.json");
  assert.deepEqual(deep.map((e) => e.uri.slice("azblob://logs/web/".length)), [
    "app-1.json",
    "app-2.json",
    "sub/app-3.json",
  ]);
  const one = await f.list("azblob://logs/web/web-1.json");
  assert.deepEqual(one.map((e) => e.uri), ["azblob://logs/web/web-1.json"]);
  assert.equal(f.warnings.length, 0);
  assert.deepEqual(await f.list("azblob://logs/web/none-*.json"), []);
  assert.deepEqual(f.warnings.map((w) => w.message), [
    "no blob matches 'azblob://logs/web/none-*.json'",
  ]);
});

Deno.test("Azure's archive layout gives path times in UTC, and from/to skip the hours outside", async () => {
  await using f = await fixture();
  const hours: [number, number][] = [[1, 12], [1, 13], [1, 14], [2, 0]];
  for (const [d, h] of hours) {
    await f.az.upload("insights-logs-signinlogs", hourBlob(d, h), signIn(d, h, `u${d}${h}@x`));
  }
  const all = await f.list(ARCHIVE);
  assert.deepEqual(
    all.map((e) => new Date(e.pathTime!).toISOString()),
    hours.map(([d, h]) => new Date(Date.UTC(2024, 4, d, h)).toISOString()),
  );
  assert.equal(
    all[1]!.uri,
    `azblob://arch/insights-logs-signinlogs/${hourBlob(1, 13)}`,
  );
  const some = await f.list(ARCHIVE, {
    from: Date.parse("2024-05-01T13:30:00Z"),
    to: Date.parse("2024-05-02T00:00:00Z"),
  });
  assert.deepEqual(some.map((e) => e.uri.split("/d=")[1]), [
    "01/h=13/m=00/PT1H.json",
    "01/h=14/m=00/PT1H.json",
  ]);
  assert.equal(await text(some[0]!), signIn(1, 13, "u113@x"));
});

Deno.test("a store with a SAS token lists and reads; a token without the list permission is BAD_DATASTORE", async () => {
  await using f = await fixture();
  await f.az.upload("logs", "a/1.json", '{"n":1}\n');
  const container = f.az.service.getContainerClient("logs");
  const sas = async (permissions: string) =>
    new URL(
      await container.generateSasUrl({
        permissions: ContainerSASPermissions.parse(permissions),
        expiresOn: new Date(Date.now() + 3_600_000),
      }),
    ).search;
  const token = await sas("rl");
  f.stores.set(
    "logs",
    definition(f.az, { accountKey: undefined, sasToken: token, container: "logs" }),
  );
  const entries = await f.list("azblob://logs/a/*.json");
  assert.deepEqual(entries.map((e) => e.uri), ["azblob://logs/a/1.json"]);
  assert.equal(await text(entries[0]!), '{"n":1}\n');
  // A token that may list but not read fails the read as a wrong definition.
  f.stores.set(
    "logs",
    definition(f.az, { accountKey: undefined, sasToken: await sas("l"), container: "logs" }),
  );
  const [listed] = await f.list("azblob://logs/a/*.json");
  await assert.rejects(
    listed!.open(new AbortController().signal),
    (e: unknown) => code("BAD_DATASTORE")(e) && /check its sasToken/.test((e as Error).message),
  );
  const readOnly = await sas("r");
  f.stores.set(
    "logs",
    definition(f.az, { accountKey: undefined, sasToken: readOnly, container: "logs" }),
  );
  const err = await f.list("azblob://logs/a/*.json").catch((e) => e);
  assert.ok(code("BAD_DATASTORE")(err), String(err));
  assert.match(err.message, /datastore 'logs'.*check its sasToken/);
  const sig = new URLSearchParams(readOnly).get("sig")!;
  assert.ok(!err.message.includes(sig) && !err.message.includes(readOnly));
});

Deno.test("a wrong account key is BAD_DATASTORE naming the store, never the key", async () => {
  await using f = await fixture();
  await f.az.upload("logs", "a/1.json", "{}\n");
  const wrong = crypto.getRandomValues(new Uint8Array(64)).toBase64();
  f.stores.set("logs", definition(f.az, { accountKey: wrong, container: "logs" }));
  for (const uri of ["azblob://logs/a/*.json", "azblob://logs/a/1.json"]) {
    const err = await f.list(uri).catch((e) => e);
    assert.ok(code("BAD_DATASTORE")(err), String(err));
    assert.match(err.message, /^datastore 'logs': the storage account 'devstoreaccount1' refused/);
    assert.ok(!err.message.includes(wrong) && !err.message.includes(DEV_KEY));
  }
});

Deno.test("a blob that vanishes while it is read ends with a warning naming it, keeping whole lines only", async () => {
  await using f = await fixture({ rangeBytes: 100 });
  const lines = Array.from(
    { length: 30 },
    (_, i) => JSON.stringify({ n: i, pad: "x".repeat(i % 7) }),
  );
  await f.az.upload("logs", "big/gone.json", lines.join("\n") + "\n");
  const [entry] = await f.list("azblob://logs/big/*.json");
  const reader = (await entry!.open(new AbortController().signal)).getReader();
  const first = await reader.read();
  assert.ok(first.value && first.value.length <= 100);
  await f.az.service.getContainerClient("logs").deleteBlob("big/gone.json");
  const chunks = [first.value];
  for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
  const got = chunks.map((c) => new TextDecoder().decode(c)).join("");
  assert.ok(got.length < lines.join("\n").length);
  // Whatever was read is whole lines of the blob, in order.
  assert.ok((lines.join("\n") + "\n").startsWith(got));
  assert.ok(got.endsWith("\n"));
  assert.deepEqual(f.warnings.map((w) => w.level), ["WARN"]);
  assert.match(
    f.warnings[0]!.message,
    /^blob 'azblob:\/\/logs\/big\/gone\.json' vanished or changed while it was read/,
  );
});

Deno.test("a blob replaced while it is read is not mixed with its new content", async () => {
  await using f = await fixture({ rangeBytes: 100 });
  const old = Array.from({ length: 20 }, (_, i) => `{"old":${i}}`).join("\n") + "\n";
  await f.az.upload("logs", "big/swap.json", old);
  const [entry] = await f.list("azblob://logs/big/*.json");
  const reader = (await entry!.open(new AbortController().signal)).getReader();
  const chunks = [(await reader.read()).value!];
  await f.az.upload("logs", "big/swap.json", old.replaceAll("old", "new"));
  for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
  const got = chunks.map((c) => new TextDecoder().decode(c)).join("");
  assert.ok(old.startsWith(got) && got.length < old.length, got);
  assert.match(
    f.warnings[0]?.message ?? "",
    /'azblob:\/\/logs\/big\/swap\.json' vanished or changed/,
  );
});

Deno.test("a blob deleted after it was listed cannot be opened, and a whole blob reads in ranges", async () => {
  await using f = await fixture({ rangeBytes: 64 });
  const body = Array.from({ length: 50 }, (_, i) => `{"n":${i}}`).join("\n"); // no final newline
  await f.az.upload("logs", "r/keep.json", body);
  await f.az.upload("logs", "r/lost.json", "{}\n");
  const [keep, lost] = await f.list("azblob://logs/r/*.json");
  assert.equal(await text(keep!), body);
  await f.az.service.getContainerClient("logs").deleteBlob("r/lost.json");
  await assert.rejects(lost!.open(new AbortController().signal), /no longer exists/);
});

Deno.test("the store's acl decides: no read is as no store, and globs need list too", async () => {
  await using f = await fixture();
  await f.az.upload("logs", "a/1.json", "{}\n");
  const carol: User = { name: "carol", groups: [], admin: false };
  await assert.rejects(f.open("azblob://logs/a/1.json", carol), code("NOT_FOUND"));
  await assert.rejects(
    f.list("azblob://logs/a/*.json", { user: bob }),
    (e: unknown) =>
      code("FORBIDDEN")(e) && /may not list datastore 'logs'/.test((e as Error).message),
  );
  assert.deepEqual((await f.list("azblob://logs/a/1.json", { user: bob })).length, 1);
  await assert.rejects(f.open("azblob://nope/a.json"), code("NOT_FOUND"));
  await assert.rejects(f.list("azblob://arch/Bad_Container/x.json"), code("NOT_FOUND"));
  await assert.rejects(f.list("azblob://arch/missing/x.json"), code("NOT_FOUND"));
});
