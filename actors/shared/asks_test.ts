import assert from "node:assert/strict";
import { Asks } from "./asks.ts";
import { memoryStorage } from "../test_support.ts";
import { askKey, encodeText } from "./keys.ts";

Deno.test("a server takes only the requests for its own queries; another server's stay for it", async () => {
  await using storage = await memoryStorage();
  const asks = new Asks(storage);
  await asks.ask("mine-1", "cancel");
  await asks.ask("theirs", "cancel");
  await asks.ask("mine-2", "free");
  const mine = new Set(["mine-1", "mine-2"]);
  const taken = [];
  for await (const ask of asks.take((id) => mine.has(id))) taken.push(ask);
  assert.deepEqual(taken, [
    { queryId: "mine-1", what: "cancel" },
    { queryId: "mine-2", what: "free" },
  ]);
  // Taken once: gone. The other server's request is still there, for it.
  const again = [];
  for await (const ask of asks.take((id) => mine.has(id))) again.push(ask);
  assert.deepEqual(again, []);
  const theirs = [];
  for await (const ask of asks.take((id) => id === "theirs")) theirs.push(ask);
  assert.deepEqual(theirs, [{ queryId: "theirs", what: "cancel" }]);
});

Deno.test("a request that is neither cancel nor free is dropped, not acted on", async () => {
  await using storage = await memoryStorage();
  await storage.put(askKey("q"), encodeText("explode"));
  const asks = new Asks(storage);
  const taken = [];
  for await (const ask of asks.take(() => true)) taken.push(ask);
  assert.deepEqual(taken, []);
  assert.equal(await storage.get(askKey("q")), null);
});
