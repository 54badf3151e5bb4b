import assert from "node:assert/strict";
import { parseAzblobDefinition } from "./definition.ts";

const KEY = "c2VjcmV0LWtleS1vZi10aGUtYWNjb3VudC0xMjM0NTY3ODkw";
const SAS = "sv=2021-12-02&sr=c&sp=rl&sig=AbCdEfSecretSignature%3D";

const def = (store: Record<string, unknown>) => ({ type: "AZBLOB", azblobStore: store });

Deno.test("parseAzblobDefinition() fills the defaults: the public endpoint, UTC, timeouts", () => {
  const r = parseAzblobDefinition("arch", def({ accountName: "contoso", accountKey: KEY }));
  assert.ok(r.ok);
  assert.equal(r.definition.endpoint, "https://contoso.blob.core.windows.net");
  assert.equal(r.definition.timeZone, "UTC");
  assert.equal(r.definition.connectTimeoutMs, 10_000);
  assert.equal(r.definition.readTimeoutMs, 60_000);
  assert.equal(r.definition.maxErrorRetries, 3);
  assert.equal(r.definition.container, undefined);
  const sas = parseAzblobDefinition(
    "arch",
    def({
      endpoint: "http://127.0.0.1:10000/devstoreaccount1/",
      accountName: "devstoreaccount1",
      sasToken: "?" + SAS,
      container: "insights-logs-auditlogs",
    }),
  );
  assert.ok(sas.ok);
  assert.equal(sas.definition.sasToken, SAS);
  assert.equal(sas.definition.endpoint, "http://127.0.0.1:10000/devstoreaccount1");
});

Deno.test("parseAzblobDefinition() names every wrong key and never shows the key or the token", () => {
  const r = parseAzblobDefinition(
    "arch",
    def({
      accountName: KEY, // pasted in the wrong place
      accountKey: KEY,
      sasToken: SAS,
      container: "Bad--Name",
      endpoint: "ftp://x",
      readTimeout: "soon",
      colour: "red",
    }),
  );
  assert.ok(!r.ok);
  const text = r.problems.join("\n");
  for (const key of ["accountName", "container", "'accountKey' and 'sasToken'", "colour"]) {
    assert.ok(text.includes(key), `${key} in ${text}`);
  }
  assert.ok(!text.includes(KEY) && !text.includes("AbCdEfSecretSignature"), text);
  const values = parseAzblobDefinition(
    "arch",
    def({
      accountName: "contoso",
      accountKey: "not base64 at all!",
      endpoint: "ftp://x",
      readTimeout: "soon",
    }),
  );
  assert.ok(!values.ok);
  assert.match(values.problems.join("\n"), /'accountKey' is not a base64 account key/);
  assert.match(values.problems.join("\n"), /'endpoint' has value "ftp:\/\/x"/);
  assert.match(values.problems.join("\n"), /'readTimeout' has value "soon"/);
  assert.ok(!values.problems.join("\n").includes("not base64 at all"));
  const token = parseAzblobDefinition("arch", def({ accountName: "contoso", sasToken: "sv=1" }));
  assert.ok(!token.ok);
  assert.match(token.problems[0]!, /'sasToken' is not a SAS token.*'sig='/);
});

Deno.test("parseAzblobDefinition() refuses another type or shape, naming AZBLOB's", () => {
  const r = parseAzblobDefinition("arch", { type: "FILE", fileStore: {} });
  assert.ok(!r.ok);
  assert.match(r.problems[0]!, /datastore 'arch': the definition must be \{"type": "AZBLOB"/);
});
