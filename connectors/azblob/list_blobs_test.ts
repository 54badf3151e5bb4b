import assert from "node:assert/strict";
import { blobUrl, parseListPage } from "./list_blobs.ts";

Deno.test("parseListPage() reads names (escaped or encoded), sizes, times, ETags and the marker", () => {
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<EnumerationResults ServiceEndpoint="http://x/" ContainerName="c"><Prefix>a/</Prefix>
<Blobs><Blob><Name>a/R&amp;D &lt;1&gt;.json</Name><Properties>
<Last-Modified>Wed, 01 May 2024 13:00:00 GMT</Last-Modified><Etag>0x8DC</Etag>
<Content-Length>42</Content-Length></Properties></Blob>
<Blob><Name Encoded="true">a%2Fodd%EF%BF%BE.json</Name><Properties><Content-Length>7</Content-Length>
</Properties></Blob></Blobs><NextMarker>2!72!MDAwMDA</NextMarker></EnumerationResults>`;
  const page = parseListPage(xml);
  assert.deepEqual(page.blobs[0], {
    name: "a/R&D <1>.json",
    size: 42,
    modified: Date.UTC(2024, 4, 1, 13),
    etag: "0x8DC",
  });
  assert.equal(page.blobs[1]!.name, "a/odd\uFFFE.json");
  assert.equal(page.nextMarker, "2!72!MDAwMDA");
  assert.equal(
    parseListPage("<EnumerationResults><Blobs /><NextMarker /></EnumerationResults>")
      .nextMarker,
    "",
  );
});

Deno.test("blobUrl() encodes each segment of a blob name and keeps the slashes", () => {
  assert.equal(
    blobUrl("http://127.0.0.1:1/acc", "c", "y=2024/a b#?.json").href,
    "http://127.0.0.1:1/acc/c/y%3D2024/a%20b%23%3F.json",
  );
});
