/**
 * A datastore kind is one record registered with one call (connectors/datastore_kind.ts): a toy
 * kind, defined here and nowhere else, is in the API contract's enum and `GET /datastore-kinds`,
 * the admin accepts and refuses its definitions by its own check, its secret is hidden and bound
 * to its host, and a query reads through its factory.
 */

import assert from "node:assert/strict";
import { z } from "zod";
import type { DatastoreKind } from "../../connectors/datastore_kind.ts";
import { definitionAcl, readableDefinition, storeAllows } from "../../connectors/store_acl.ts";
import { startTestServer } from "./server.ts";

const D = "/API/v1.0/datastores";
const PASSWORD = "toy-password-never-shown-1234";

const toyStore = z.object({
  host: z.string().regex(/^[a-z.]+$/, "expected a host name of lower-case letters and dots"),
  password: z.string().min(8),
  acl: z.unknown().optional(),
}).strict();

/** Lines of `toy://<store>/lines.json`: over 1 MiB, so that a scan worker would take it. */
const LINES = 60_000;

/** Serves `toy://<store>/lines.json`: JSON lines naming the store's host. */
function toyKind(definitions: Map<string, string>): DatastoreKind {
  return {
    type: "TOY",
    scheme: "toy",
    storeKey: "toyStore",
    description: "a toy for the test",
    secretKeys: ["password"],
    boundKeys: ["host"],
    check(name, json) {
      const parsed = toyStore.safeParse((json as { toyStore?: unknown }).toyStore);
      if (parsed.success) return { ok: true, families: [], logs: [] };
      return {
        ok: false,
        problems: parsed.error.issues.map((i) =>
          `datastore '${name}': key '${i.path.join(".")}': ${i.message}`
        ),
      };
    },
    factory(uri, user) {
      const name = uri.slice("toy://".length).split("/")[0];
      const json = readableDefinition(name!, definitions.get(name!) ?? null, "toyStore", user);
      const host = (json as { toyStore: { host: string } }).toyStore.host;
      const bytes = new TextEncoder().encode((JSON.stringify({ host }) + "\n").repeat(LINES));
      return Promise.resolve({
        async *list(_pattern, options) {
          if (!storeAllows(definitionAcl(json, "toyStore"), options.user, "read")) return;
          yield {
            uri: `toy://${name}/lines.json`,
            size: bytes.length,
            modified: 0,
            pathTime: null,
            open: () => Promise.resolve(new Blob([bytes]).stream()),
          };
        },
      });
    },
  };
}

Deno.test("a toy kind registered with one call is in the contract's enum, checked by the admin, its secret hidden and bound, read by a query", async () => {
  // What the toy's factory reads; the admin's files are the server's (the test copies them).
  const definitions = new Map<string, string>();
  // With scan workers: a source of a kind they do not have is read by the server itself.
  await using s = await startTestServer({ "query.workers": "2" }, {
    kinds: [toyKind(definitions)],
  });
  const admin = await s.deps.users.add("root", { admin: true });
  const call = (path: string, init: RequestInit = {}) =>
    fetch(s.url + path, {
      ...init,
      headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
    });

  const doc = await (await fetch(`${s.url}/API/v1.0/openapi.json`)).json();
  const put = doc.paths["/API/v1.0/datastores/{name}"].put;
  assert.deepEqual(
    put.requestBody.content["application/json"].schema.properties.type.enum,
    ["AZBLOB", "CLOUDAPI", "FILE", "TOY"],
  );
  const kinds = await (await call("/API/v1.0/datastore-kinds")).json();
  const { check: _, factory: __, ...described } = toyKind(definitions);
  assert.deepEqual(kinds.find((k: { type: string }) => k.type === "TOY"), described);

  // Refused by its own check, naming the key; an unknown type names the toy among the kinds.
  const bad = await call(`${D}/play`, {
    method: "PUT",
    body: JSON.stringify({ type: "TOY", toyStore: { host: "NOPE", password: PASSWORD } }),
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message, /key 'host': expected a host name/);
  const unknown = await call(`${D}/play`, {
    method: "PUT",
    body: JSON.stringify({ type: "TOYS", toyStore: {} }),
  });
  assert.match((await unknown.json()).message, /must be one of AZBLOB, CLOUDAPI, FILE, TOY/);

  // Accepted; shown without its secret.
  const def = { type: "TOY", toyStore: { host: "toy.example", password: PASSWORD } };
  const created = await call(`${D}/play`, { method: "PUT", body: JSON.stringify(def) });
  assert.equal(created.status, 201);
  const shown = await created.json();
  assert.deepEqual(shown, { type: "TOY", toyStore: { host: "toy.example", passwordSet: true } });
  const listed = await (await call(D)).json();
  assert.deepEqual(listed, [{ name: "play", type: "TOY", families: [], logs: [] }]);

  // What GET showed goes back and keeps the password; a new host needs it again.
  const kept = await call(`${D}/play`, { method: "PUT", body: JSON.stringify(shown) });
  assert.equal(kept.status, 200);
  await kept.body?.cancel();
  const moved = await call(`${D}/play`, {
    method: "PUT",
    body: JSON.stringify({ type: "TOY", toyStore: { host: "evil.example", passwordSet: true } }),
  });
  assert.equal(moved.status, 400);
  const refusal = await moved.json();
  assert.match(refusal.message, /key 'host' changed: give 'password' again/);
  assert.ok(!JSON.stringify(refusal).includes(PASSWORD));

  // A query reads through the toy's factory.
  definitions.set("play", (await s.deps.datastoreAdmin!.read("play"))!);
  const res = await fetch(`${s.url}/API/v1.0/?scriptPath=/user`, {
    method: "POST",
    headers: { Authorization: `Bearer ${admin}`, "Content-Type": "text/vnd.engine.script" },
    body: "READ_JSON(src: 'toy://play/lines.json') | select(host, count(*) as n) | group(host)",
  });
  assert.equal(res.status, 200, await res.clone().text());
  assert.deepEqual(await res.json(), [{ host: "toy.example", n: LINES }]);
});
