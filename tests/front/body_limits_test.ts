/**
 * Every route that takes a body refuses one over its limit with `413 PAYLOAD_TOO_LARGE` from the
 * Content-Length alone, before reading it (issue 22, item 4): the routes are walked from the
 * API's own OpenAPI document, so a route added with a body is covered without editing this test.
 */

import assert from "node:assert/strict";
import { startTestServer } from "../api/server.ts";
import { RawClient } from "./raw_http.ts";

/** A terabyte announced, none of it sent: a route that read before checking would hang. */
const ANNOUNCED = 2 ** 40;

/** Path parameters as a caller fills them in. */
const EXAMPLES: Record<string, string> = { name: "logs", path: "user/notes.txt", id: "q1" };

Deno.test("each route of openapi.json that takes a body answers an oversized Content-Length 413 before reading", async () => {
  await using s = await startTestServer();
  const doc = await (await fetch(`${s.url}/API/v1.0/openapi.json`)).json();
  const walked: string[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations as Record<string, unknown>)) {
      const requestBody = (operation as { requestBody?: { content: Record<string, unknown> } })
        .requestBody;
      if (!requestBody) continue;
      const path = template.replace(/\{(\w+)\}/g, (_, name) => EXAMPLES[name] ?? "x");
      const type = Object.keys(requestBody.content)[0];
      using client = await RawClient.open(s.url);
      await client.send(
        `${method.toUpperCase()} ${path}?scriptPath=/user HTTP/1.1\r\nHost: x\r\n` +
          `Authorization: Bearer ${s.tokens.alice}\r\nContent-Type: ${type}\r\n` +
          `Content-Length: ${ANNOUNCED}\r\n\r\n`,
      );
      const answer = await client.answer(10_000);
      const route = `${method.toUpperCase()} ${template}`;
      assert.equal(answer?.status, 413, `${route}: ${answer?.head}\n${answer?.body}`);
      assert.match(answer!.head, /\r\ncontent-type: application\/json/i, route);
      const body = JSON.parse(answer!.body);
      assert.equal(body.code, "PAYLOAD_TOO_LARGE", route);
      assert.equal(typeof body.message, "string", route);
      walked.push(route);
    }
  }
  // Not a walk of nothing: the routes with bodies today, patterns/try among them.
  for (
    const route of [
      "POST /API/v1.0/",
      "POST /API/v1.0/queries",
      "POST /API/v1.0/check",
      "POST /API/v1.0/patterns/try",
      "PUT /API/v1.0/datastores/{name}",
      "PUT /API/v1.0/resources/{path}",
    ]
  ) assert.ok(walked.includes(route), `${route} walked: ${walked.join(", ")}`);
});

Deno.test("POST /patterns/try refuses a chunked body once it passes 1 MiB, while reading it", async () => {
  await using s = await startTestServer();
  const chunk = new TextEncoder().encode(`"${"a".repeat(64 * 1024)}",`);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      // Far more than the limit, if it were all read: 64 MiB.
      if (sent++ === 1024) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const res = await s.fetch("alice", "/API/v1.0/patterns/try", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body,
  });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).code, "PAYLOAD_TOO_LARGE");
  assert.ok(sent < 1024, `stopped reading early (${sent} chunks pulled)`);
});
