import assert from "node:assert/strict";
import { authorize, BLOB_API_VERSION, stringToSign } from "./authorize.ts";

Deno.test("stringToSign() puts the signed headers in order, then x-ms- headers and the sorted query", () => {
  const headers = new Headers({
    "x-ms-version": "2021-12-02",
    "x-ms-date": "Wed, 01 May 2024 13:00:00 GMT",
    "Range": "bytes=0-99",
    "If-Match": '"0x8DC"',
    "Content-Length": "0",
  });
  const url = new URL(
    "http://127.0.0.1:10000/devstoreaccount1/logs?restype=container&comp=list&prefix=a%2Fy%3D",
  );
  assert.equal(
    stringToSign("devstoreaccount1", "get", url, headers),
    "GET\n\n\n\n\n\n\n\n" + '"0x8DC"' + "\n\n\nbytes=0-99\n" +
      "x-ms-date:Wed, 01 May 2024 13:00:00 GMT\nx-ms-version:2021-12-02\n" +
      "/devstoreaccount1/devstoreaccount1/logs\ncomp:list\nprefix:a/y=\nrestype:container",
  );
});

Deno.test("authorize() signs with the key, or adds the SAS token and signs nothing", async () => {
  const url = new URL("https://acc.blob.core.windows.net/c/b.json");
  const keyed = new Headers();
  const same = await authorize(
    { accountName: "acc", accountKey: "a2V5LWJ5dGVz" },
    "GET",
    url,
    keyed,
  );
  assert.equal(same.href, url.href);
  assert.match(keyed.get("Authorization")!, /^SharedKey acc:[A-Za-z0-9+/]{43}=$/);
  assert.equal(keyed.get("x-ms-version"), BLOB_API_VERSION);
  const sas = new Headers();
  const signed = await authorize(
    { accountName: "acc", sasToken: "sv=1&sig=x%2By" },
    "GET",
    url,
    sas,
  );
  assert.equal(signed.search, "?sv=1&sig=x%2By");
  assert.equal(sas.has("Authorization"), false);
});
