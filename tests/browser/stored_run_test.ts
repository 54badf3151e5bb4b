/**
 * The console's "Run view" builds its request so that a view's arguments cannot replace the
 * script that runs: `scriptPath` is the path shown, and an argument named like a parameter of
 * the API is refused naming it.
 */

import assert from "node:assert/strict";
import { RESERVED_PARAMETERS, storedRunPath } from "../../console/stored_run.ts";

Deno.test("storedRunPath() puts the script's path and then its arguments in the query string", () => {
  const url = storedRunPath("/user/views/hits.sx", { ip: "10.0.0.1", note: "a&b=c" });
  const params = new URL(url, "http://x").searchParams;
  assert.deepEqual([...params], [
    ["scriptPath", "/user/views/hits.sx"],
    ["ip", "10.0.0.1"],
    ["note", "a&b=c"],
  ]);
});

Deno.test("storedRunPath() refuses an argument named like a parameter of the API, naming it", () => {
  for (const name of [...RESERVED_PARAMETERS, "opt.format"]) {
    assert.throws(
      () => storedRunPath("/user/v.sx", { [name]: "/users/bob/other.sx" }),
      new RegExp(`the argument '${name.replace(".", "\\.")}' cannot be given`),
    );
  }
  // Whatever the arguments, the script that runs is the one asked for.
  const url = storedRunPath("/user/v.sx", { scriptpath: "/x.sx" });
  assert.deepEqual(new URL(url, "http://x").searchParams.getAll("scriptPath"), ["/user/v.sx"]);
});
