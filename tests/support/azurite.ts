/**
 * Azurite, Microsoft's Azure Storage emulator (npm `azurite`), for tests of the `azblob://`
 * datastore: installed through npx on first use (into npm's cache: no root, Node 20 or later),
 * its blob service started on a free loopback port over a temp folder, stopped (and the folder
 * removed) at dispose. Blobs are put there with the official SDK, `@azure/storage-blob`, signed
 * with Azurite's well-known dev account.
 *
 *   await using az = await startAzurite();
 *   await az.upload("arch", "a/b.json", '{"x":1}\n');
 */

import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { cleanUp, withDeadline } from "./deadline.ts";
import { sleep } from "../../engine/util/sleep.ts";

const AZURITE = "azurite@3.37.0";
/** Azurite's documented development account (not a secret: every Azurite has it). */
export const DEV_ACCOUNT = "devstoreaccount1";
export const DEV_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface Azurite extends AsyncDisposable {
  /** The blob endpoint, path style: `http://127.0.0.1:<port>/devstoreaccount1`. */
  readonly endpoint: string;
  readonly service: BlobServiceClient;
  /** Uploads a block blob, creating its container when needed. */
  upload(container: string, name: string, content: string | Uint8Array): Promise<void>;
}

/** The script npx installed for the blob service, resolved once per process. */
let script: Promise<string> | undefined;

function azuriteScript(): Promise<string> {
  script ??= (async () => {
    const out = await new Deno.Command("npx", {
      // `command -v` is the shell's own: no `which` needed.
      args: ["--yes", "-p", AZURITE, "-c", "command -v azurite-blob"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const bin = new TextDecoder().decode(out.stdout).trim();
    if (!out.success || bin === "") {
      throw new Error(`cannot install ${AZURITE}: ${new TextDecoder().decode(out.stderr)}`);
    }
    // Run its script with node directly: one process, stopped by its own id.
    return await Deno.realPath(bin);
  })();
  return script;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

export async function startAzurite(): Promise<Azurite> {
  const main = await azuriteScript();
  const dir = await Deno.makeTempDir({ prefix: "trawl-azurite-" });
  const stops: (() => unknown)[] = [() => Deno.remove(dir, { recursive: true })];
  const stopAll = () => cleanUp(stops.toReversed());
  try {
    const port = freePort();
    const child = new Deno.Command("node", {
      args: [
        main,
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        String(port),
        "--location",
        dir,
        "--loose",
        "--skipApiVersionCheck",
        "--disableTelemetry",
        "--silent",
      ],
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    stops.push(async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already ended */ }
      await withDeadline(child.status, 10_000, "Azurite's exit");
      await stderr;
    });
    await waitForPort(port, child.status, stderr);
    const endpoint = `http://127.0.0.1:${port}/${DEV_ACCOUNT}`;
    const service = new BlobServiceClient(
      endpoint,
      new StorageSharedKeyCredential(DEV_ACCOUNT, DEV_KEY),
    );
    return {
      endpoint,
      service,
      async upload(container, name, content) {
        const c = service.getContainerClient(container);
        await c.createIfNotExists();
        const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
        await c.getBlockBlobClient(name).uploadData(bytes);
      },
      [Symbol.asyncDispose]: stopAll,
    };
  } catch (e) {
    await stopAll().catch(() => {});
    throw e;
  }
}

async function waitForPort(
  port: number,
  exited: Promise<Deno.CommandStatus>,
  stderr: Promise<string>,
): Promise<void> {
  let ended = false;
  exited.then(() => ended = true);
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (ended) throw new Error(`Azurite ended at start: ${await stderr}`);
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`Azurite did not listen on port ${port} within 60 s`);
}
