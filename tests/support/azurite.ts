/**
 * Azurite, Microsoft's Azure Storage emulator (npm `azurite`), for tests of the `azblob://`
 * datastore: installed with npm on first use (npm_install_once.ts: no root, Node 20 or later),
 * its blob service started on a free loopback port over a temp folder, stopped (and the folder
 * removed) at dispose. Blobs are put there with the official SDK, `@azure/storage-blob`, signed
 * with Azurite's well-known dev account.
 *
 *   await using az = await startAzurite();
 *   await az.upload("arch", "a/b.json", '{"x":1}\n');
 */

import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { join } from "node:path";
import { cleanUp, withDeadline } from "./deadline.ts";
import { freePort, waitForPort } from "./loopback_port.ts";
import { npmInstallOnce } from "./npm_install_once.ts";

const AZURITE_VERSION = "3.37.0";
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

/** The blob service's script (its package.json's `bin`), installed once per user. */
async function azuriteScript(): Promise<string> {
  const pkg = await npmInstallOnce(
    "azurite",
    AZURITE_VERSION,
    `trawl-azurite-${AZURITE_VERSION}-${Deno.uid() ?? "user"}`,
  );
  const manifest = JSON.parse(await Deno.readTextFile(join(pkg, "package.json"))) as {
    bin: Record<string, string>;
  };
  // Run it with node directly: one process, stopped by its own id.
  return join(pkg, manifest.bin["azurite-blob"]!);
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
    await waitForPort(port, { name: "Azurite", exited: child.status, log: stderr, every: 100 });
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
