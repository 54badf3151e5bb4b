/**
 * Datastore credentials are write-only for everyone, admins included: `/datastores` hides them,
 * `/resources` refuses the definitions, and so does every reader of a query. A source naming
 * `/system/datastores` (READ_JSON, READ_CSV, READ_W3C, READ_ZEEK, PARSE, LIST), a stored table,
 * view or pattern file there, and a `save` there are refused naming the rule; a wider glob
 * (`/system/**`, `/**`, a FILE datastore rooted at the home or at the KV's folder) walks past
 * them, and the KV's files, without a word.
 * On a real server (a child process) with the files storage and with a KV.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startServerProcess } from "../foundation/server_process.ts";
import { type ApiClient, finished, SCRIPT_TYPE } from "../api/client.ts";

const SECRET = "Sup3r.S3cret~Value-for-the-definitions-test";
const SAS = "sv=2022-11-02&ss=b&srt=co&sp=rl&sig=SasS1gnatureForTheTest";

const NAMED = [
  "READ_JSON(src: '/system/datastores/*.json')",
  "READ_JSON(src: '/system/datastores/corp.json')",
  "READ_CSV(src: '/system/datastores/corp.json')",
  "READ_W3C(src: '/system/datastores/*')",
  "READ_ZEEK(src: '/system/datastores/blob.json')",
  "PARSE(pattern: 'LD:line EOL', src: '/system/datastores/*.json')",
  "LIST(src: '/system/datastores/*')",
  "@[/system/datastores/corp.sxt]",
  "@[/system/datastores/corp.sx]",
  "PARSE(pattern_file: '/system/datastores/corp.sxp', src: '/shared/a.log')",
  "VALUES((a: 1)) | save('/system/datastores/t.sxt')",
];

const WIDE = [
  "PARSE(pattern: 'LD:line EOL', src: '/system/**')",
  "PARSE(pattern: 'LD:line EOL', src: '/**')",
  "READ_JSON(src: '/**/*.json')",
  "READ_CSV(src: '/system/**')",
  "LIST(src: '/**')",
  "LIST(src: '/system/*')",
  "PARSE(pattern: 'LD:line EOL', src: 'file://home/**')",
  "PARSE(pattern: 'LD:line EOL', src: 'file://home/data/system/datastores/*.json')",
  "READ_JSON(src: 'file://home/data/**/*.json')",
  "LIST(src: 'file://home/**')",
  "PARSE(pattern: 'LD:line EOL', src: 'file://top/**')",
  "PARSE(pattern: 'LD:line EOL', src: 'file://top/state.kv*')",
  "READ_CSV(src: 'file://top/**')",
  "LIST(src: 'file://top/**')",
];

for (const storage of ["files", "kv"] as const) {
  Deno.test(`no reader of a query shows a datastore definition, not even to an admin (${storage})`, async () => {
    const root = await Deno.makeTempDir({ prefix: "trawl-definitions-" });
    try {
      const home = join(root, "home");
      await Deno.mkdir(join(home, "conf"), { recursive: true });
      if (storage === "kv") {
        await Deno.writeTextFile(
          join(home, "conf", "settings.conf"),
          `storage = kv:${join(root, "state.kv")}\n`,
        );
      }
      await using server = await startServerProcess(home);
      const token = server.firstToken!;
      assert.ok(token, server.stdout.join("\n"));
      const api: ApiClient = {
        url: server.url,
        fetch: (_user, path, init = {}) => {
          const headers = new Headers(init.headers);
          headers.set("Authorization", `Bearer ${token}`);
          return fetch(server.url + path, { ...init, headers });
        },
      };
      const put = async (name: string, body: unknown) => {
        const res = await api.fetch("admin", `/API/v1.0/datastores/${name}`, {
          method: "PUT",
          body: JSON.stringify(body),
          headers: { "Content-Type": "application/json" },
        });
        assert.equal(res.status, 201, await res.text());
      };
      await put("corp", {
        type: "CLOUDAPI",
        cloudapiStore: {
          clientId: "11111111-2222-3333-4444-555555555555",
          tenantId: "contoso.onmicrosoft.com",
          secret: SECRET,
          directoryLogs: "audits:audits|2 h|15 min",
        },
      });
      await put("blob", {
        type: "AZBLOB",
        azblobStore: { accountName: "devstoreaccount1", sasToken: SAS },
      });
      await put("home", { type: "FILE", fileStore: { root: home } });
      // The folder of the home and of the KV's file: the KV holds the credentials too.
      await put("top", { type: "FILE", fileStore: { root } });
      const log = await api.fetch("admin", "/API/v1.0/resources/shared/a.log", {
        method: "PUT",
        body: "one line\n",
      });
      assert.equal(log.status, 201, await log.text());

      const leaks = (text: string) =>
        [SECRET, SAS, "SasS1gnature", "corp.json", "blob.json", "Sup3r"].filter((s) =>
          text.includes(s)
        );

      for (const script of NAMED) {
        const res = await api.fetch("admin", "/API/v1.0/queries?scriptPath=/user", {
          method: "POST",
          headers: SCRIPT_TYPE,
          body: script,
        });
        const text = await res.text();
        assert.equal(res.status, 403, `${script}: ${text}`);
        const body = JSON.parse(text);
        assert.equal(body.code, "FORBIDDEN", `${script}: ${text}`);
        assert.match(
          body.message,
          /datastore definitions are read and written through \/datastores, not by queries/,
          script,
        );
        assert.ok(!text.includes(SECRET) && !text.includes(SAS), `${script}: ${text}`);
      }

      for (const script of WIDE) {
        const res = await api.fetch("admin", "/API/v1.0/queries?scriptPath=/user", {
          method: "POST",
          headers: SCRIPT_TYPE,
          body: script,
        });
        const started = await res.json();
        assert.equal(res.status, 201, `${script}: ${JSON.stringify(started)}`);
        const st = await finished(api, started.queryId);
        const result = await api.fetch("admin", `/API/v1.0/queries/${started.queryId}/result`);
        const text = `${JSON.stringify(st)}\n${await result.text()}`;
        assert.deepEqual(leaks(text), [], `${script}: ${text.slice(0, 2000)}`);
      }
      // The definitions are still there for the server, and GET /datastores still lists them.
      const listed = await api.fetch("admin", "/API/v1.0/datastores");
      const names = (await listed.json()).map((d: { name: string }) => d.name).sort();
      assert.deepEqual(names, ["blob", "corp", "home", "top"]);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
