/**
 * A query id polled across a restart answers 410, not 404 (API.md: 410 is kept distinct from 404
 * for at least `query.expiredMemory`): a server stopping keeps its ids, and the next start on the
 * same home remembers them as expired. A real `main.ts serve` in a child process, stopped with
 * SIGTERM and started again.
 */

import assert from "node:assert/strict";
import { startServerProcess } from "../foundation/server_process.ts";

Deno.test("ids of freed, finished and answered queries answer 410 after a restart, an unknown id 404", async () => {
  const home = await Deno.makeTempDir({ prefix: "trawl-restart-" });
  try {
    let token = "";
    const ids: Record<string, string> = {};
    {
      await using server = await startServerProcess(home);
      token = server.firstToken!;
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${server.url}/API/v1.0${path}`, {
          ...init,
          headers: {
            Authorization: `Bearer ${token}`,
            "Content-Type": "text/vnd.engine.script",
            ...init.headers,
          },
        });
      const submit = async () => {
        const res = await api("/queries?scriptPath=/user&waitMillis=5000", {
          method: "POST",
          body: "VALUES((a: 1))",
        });
        assert.equal(res.status, 200);
        return (await res.json()).queryId as string;
      };
      ids.kept = await submit();
      ids.freed = await submit();
      assert.equal((await api(`/queries/${ids.freed}`, { method: "DELETE" })).status, 204);
      const sync = await api("/?scriptPath=/user", { method: "POST", body: "VALUES((a: 1))" });
      ids.answered = sync.headers.get("Trawl-Query-Id")!;
      await sync.body?.cancel();
      assert.equal(await server.stop("SIGTERM"), 0);
    }
    await using again = await startServerProcess(home);
    for (const [what, id] of Object.entries(ids)) {
      const res = await fetch(`${again.url}/API/v1.0/queries/${id}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      const body = await res.json();
      assert.equal(res.status, 410, `${what}: ${JSON.stringify(body)}`);
      assert.equal(body.code, "QUERY_EXPIRED");
    }
    const never = await fetch(`${again.url}/API/v1.0/queries/${crypto.randomUUID()}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(never.status, 404);
    await never.body?.cancel();
    // The ids were read once: the file is gone until the next stop writes it again.
    await assert.rejects(Deno.stat(`${home}/engine_data/remembered_ids.json`));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
