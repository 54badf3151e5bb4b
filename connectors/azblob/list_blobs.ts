/**
 * Lists the blobs of a container whose names start with a prefix, with the REST API's
 * `List Blobs` (https://learn.microsoft.com/rest/api/storageservices/list-blobs): pages of XML
 * followed by their `NextMarker`. Only the few elements we need are read from the XML.
 */

import { blobRequest, type BlobRequestContext, type BlobResponse } from "./blob_request.ts";
import { BlobServiceRefusal } from "./service_refusal.ts";

export interface BlobItem {
  readonly name: string;
  readonly size: number;
  /** Epoch milliseconds. */
  readonly modified: number;
  readonly etag: string;
}

/** The service's most per page. */
const PAGE_SIZE = 5000;

/** The URL of a container, or of a blob in it (each name segment encoded). */
export function blobUrl(endpoint: string, container: string, blob?: string): URL {
  const path = blob === undefined ? "" : "/" + blob.split("/").map(encodeURIComponent).join("/");
  return new URL(`${endpoint}/${container}${path}`);
}

/** Every blob of `container` whose name starts with `prefix`, in name order, page by page. */
export async function* listBlobs(
  ctx: BlobRequestContext,
  container: string,
  prefix: string,
  pageSize = PAGE_SIZE,
): AsyncGenerator<BlobItem> {
  let marker = "";
  do {
    const url = blobUrl(ctx.def.endpoint, container);
    url.searchParams.set("restype", "container");
    url.searchParams.set("comp", "list");
    if (prefix !== "") url.searchParams.set("prefix", prefix);
    if (marker !== "") url.searchParams.set("marker", marker);
    url.searchParams.set("maxresults", String(pageSize));
    const res: BlobResponse = await blobRequest(ctx, url);
    if (res.status !== 200) throw new BlobServiceRefusal(res.status, res.code ?? xmlCode(res));
    const page = parseListPage(new TextDecoder().decode(res.body));
    yield* page.blobs;
    marker = page.nextMarker;
  } while (marker !== "");
}

/** The blobs and the next marker of one `EnumerationResults` page. */
export function parseListPage(xml: string): { blobs: BlobItem[]; nextMarker: string } {
  const blobs: BlobItem[] = [];
  for (const [, blob] of xml.matchAll(/<Blob>([\s\S]*?)<\/Blob>/g)) {
    const name = /<Name( Encoded="true")?>([\s\S]*?)<\/Name>/.exec(blob!);
    if (!name) continue;
    const text = decodeXml(name[2]!);
    blobs.push({
      name: name[1] ? decodeURIComponent(text) : text,
      size: Number(element(blob!, "Content-Length") ?? 0),
      modified: Date.parse(element(blob!, "Last-Modified") ?? "") || 0,
      etag: element(blob!, "Etag") ?? "",
    });
  }
  return {
    blobs,
    nextMarker: element(xml.replace(/<Blobs>[\s\S]*<\/Blobs>/, ""), "NextMarker") ?? "",
  };
}

function element(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  return m ? decodeXml(m[1]!) : undefined;
}

/** The `<Code>` of an XML error body, when the header did not give it. */
function xmlCode(res: BlobResponse): string | undefined {
  return element(new TextDecoder().decode(res.body), "Code");
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
};

function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (all, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(Number(e.slice(1)));
    return ENTITIES[e] ?? all;
  });
}
