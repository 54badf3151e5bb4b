import assert from "node:assert/strict";
import { errorText, redactUrl } from "./cloud_request.ts";

Deno.test("redactUrl() hides skip tokens and next-page addresses in messages", () => {
  assert.equal(
    redactUrl("https://g/v1.0/auditLogs/signIns?$top=1000&$skiptoken=abc123&x=1"),
    "https://g/v1.0/auditLogs/signIns?$top=1000&$skiptoken=…&x=1",
  );
  assert.equal(redactUrl("https://m/x?nextpage=zz"), "https://m/x?nextpage=…");
});

Deno.test("errorText() redacts the URLs that network errors quote", () => {
  const e = new TypeError(
    "error sending request for url (https://graph/v1.0/auditLogs/directoryAudits?$skiptoken=SECRETISH): connection refused",
  );
  const text = errorText(e);
  assert.ok(!text.includes("SECRETISH"), text);
  assert.match(text, /connection refused/);
  assert.match(text, /directoryAudits\?\$skiptoken=…\)/);
});
