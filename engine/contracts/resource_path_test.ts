import assert from "node:assert/strict";
import { isWithin } from "./resource_path.ts";

Deno.test("isWithin() holds for the folder and below it, never for a sibling named like it", () => {
  assert.equal(isWithin("/users/al", "/users/al"), true);
  assert.equal(isWithin("/users/al/x.log", "/users/al"), true);
  assert.equal(isWithin("/users/alice", "/users/al"), false);
  assert.equal(isWithin("/users/al-evil/x.log", "/users/al"), false);
  assert.equal(isWithin("/shared2/x", "/shared"), false);
  assert.equal(isWithin("/users", "/users/al"), false);
  assert.equal(isWithin("/anything", "/"), true);
});
