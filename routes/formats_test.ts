import assert from "node:assert/strict";
import { type FormatSpec, negotiateFormat } from "./formats.ts";

function choose(query: string, accept?: string) {
  return negotiateFormat(new URLSearchParams(query), accept);
}

Deno.test("negotiateFormat() defaults to JSON without Accept, and for */*", () => {
  for (const accept of [undefined, "*/*", "application/*", ""]) {
    const c = choose("", accept);
    assert.ok(c.ok);
    assert.equal(c.format.mediaType, "application/json");
    assert.equal(c.explicit, false);
  }
});

Deno.test("negotiateFormat() lets acceptContentType win over Accept", () => {
  const c = choose("acceptContentType=application/csv", "application/x-ndjson");
  assert.ok(c.ok);
  assert.equal(c.format.mediaType, "application/csv");
  assert.equal(c.explicit, true);
});

Deno.test("negotiateFormat() picks the offered type with the highest q", () => {
  const c = choose("", "text/html, application/json-seq;q=0.5, application/x-ndjson;q=0.9");
  assert.ok(c.ok);
  assert.equal(c.format.mediaType, "application/x-ndjson");
  assert.equal(c.explicit, true);
  const exact = choose("", "*/*, application/csv");
  assert.ok(exact.ok);
  assert.equal(exact.format.mediaType, "application/csv");
});

Deno.test("negotiateFormat() prefers a named type over a wildcard listed after it", () => {
  for (
    const [accept, type] of [
      ["application/csv, */*", "application/csv"],
      ["application/csv,*/*", "application/csv"],
      ["application/x-ndjson, application/*", "application/x-ndjson"],
      ["application/json-seq, */*;q=1", "application/json-seq"],
      ["*/*;q=0.5, application/csv", "application/csv"],
    ] as const
  ) {
    const c = choose("", accept);
    assert.ok(c.ok, accept);
    assert.equal(c.format.mediaType, type, accept);
    assert.equal(c.explicit, true, accept);
  }
});

Deno.test("negotiateFormat() answers 406 for a type not offered", () => {
  for (
    const [q, a] of [["", "text/html"], ["acceptContentType=text/plain", ""], [
      "",
      "application/json;q=0",
    ]]
  ) {
    const c = choose(q!, a);
    assert.ok(!c.ok);
    assert.equal(c.status, 406);
    assert.equal(c.code, "NOT_ACCEPTABLE");
  }
});

Deno.test("negotiateFormat() takes the zones the engine takes in opt.timezone", () => {
  for (const zone of ["Europe/Berlin", "utc", "Z"]) {
    const c = choose(`opt.timezone=${zone}`);
    assert.ok(c.ok, zone);
    assert.equal(c.format.options.timeZone, zone);
  }
});

Deno.test("negotiateFormat() validates opt.* and refuses unknown ones", () => {
  const good = choose(
    "opt.timezone=Europe/Berlin&opt.timestampFormat=yyyy-MM-dd&opt.omitHeader=true",
  );
  assert.ok(good.ok);
  assert.deepEqual(good.format.options, {
    timeZone: "Europe/Berlin",
    timestampFormat: "yyyy-MM-dd",
    omitHeader: true,
  });
  assert.equal(good.explicit, true);
  for (
    const [q, word] of [
      ["opt.colour=red", "opt.colour"],
      ["opt.timezone=Mars/Base", "Mars/Base"],
      ["opt.timestampFormat=yyyy-QQ", "opt.timestampFormat"],
      ["opt.omitHeader=yes", "opt.omitHeader"],
      ["opt.timezone=UTC&opt.timezone=UTC", "twice"],
    ]
  ) {
    const c = choose(q!);
    assert.ok(!c.ok, q);
    assert.equal(c.status, 400);
    assert.equal(c.code, "BAD_PARAMETER");
    assert.match(c.message, new RegExp(word!.replace(".", "\\.")));
  }
});

Deno.test("a format without JSON rows must say how it writes a row", () => {
  const framing = { aliases: [], contentType: "text/plain", start: "", separator: "", end: "" };
  // @ts-expect-error: a text format without a row writer is not a FormatSpec.
  const silent: FormatSpec = { ...framing, before: "", after: "\n", jsonRows: false };
  const json: FormatSpec = { ...framing, before: "", after: "\n", jsonRows: true };
  assert.deepEqual([silent.jsonRows, json.jsonRows], [false, true]);
});
