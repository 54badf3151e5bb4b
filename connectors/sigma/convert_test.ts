import assert from "node:assert/strict";
import { type Conversion, convertRules, matchRecords } from "./convert.ts";
import { DEFAULT_MAPPINGS, parseMapping } from "./mapping.ts";
import { parseCondition } from "./condition.ts";
import { parseWildcards } from "./detection.ts";

const opts = { mappings: DEFAULT_MAPPINGS, target: "graph" };

function rule(detection: string, service = "signinlogs"): string {
  return `title: t\nid: x\nlogsource:\n  product: azure\n  service: ${service}\ndetection:\n${
    detection.split("\n").map((l) => "  " + l).join("\n")
  }\n`;
}

function one(detection: string, service?: string, target = "graph"): Conversion {
  const [c] = convertRules(rule(detection, service), { ...opts, target });
  assert.ok(c);
  return c;
}

function hits(c: Conversion, records: unknown[]): number[] {
  assert.ok(c.ok, c.message);
  return matchRecords(c, records).map((m) => m.index);
}

Deno.test("conditions: or binds loosest, then and, then not; 'of' and parentheses", () => {
  const p = parseCondition("a or b and not c");
  assert.ok(p.ok);
  assert.deepEqual(p.condition, {
    kind: "or",
    items: [{ kind: "ref", name: "a" }, {
      kind: "and",
      items: [{ kind: "ref", name: "b" }, { kind: "not", item: { kind: "ref", name: "c" } }],
    }],
  });
  const q = parseCondition("(a or b) and all of sel_* and not 1 of them");
  assert.ok(q.ok);
  const bad = parseCondition("a and");
  assert.ok(!bad.ok && !bad.aggregation && /found the end/.test(bad.message));
  const agg = parseCondition("sel | count() > 5");
  assert.ok(!agg.ok && agg.aggregation);
});

Deno.test("wildcards: * and ? with \\ escapes", () => {
  assert.deepEqual(parseWildcards("a*b?c"), [{ text: "a" }, "*", { text: "b" }, "?", {
    text: "c",
  }]);
  assert.deepEqual(parseWildcards("a\\*b\\?c\\\\d\\x"), [{ text: "a*b?c\\d\\x" }]);
});

Deno.test("values are case-insensitive; precedence and 'not' over missing fields", () => {
  const c = one(
    "a:\n  AppDisplayName: teams\nb:\n  ResultType: 0\nc:\n  IPAddress: 10.0.0.1\ncondition: a or b and not c",
  );
  const recs = [
    { appDisplayName: "Teams" }, // a
    { status: { errorCode: 0 }, ipAddress: "10.0.0.2" }, // b and not c
    { status: { errorCode: 0 }, ipAddress: "10.0.0.1" }, // b and c: no
    { status: { errorCode: 0 } }, // b, ip missing: not c holds
    { appDisplayName: "Teams Web" },
  ];
  assert.deepEqual(hits(c, recs), [0, 1, 3]);
  assert.match(c.script!, /lower\(STRING\(appDisplayName\)\) = 'teams'/);
  assert.match(c.script!, /not coalesce\(/);
});

Deno.test("modifiers: contains, startswith, endswith, all, wildcards inside, cased", () => {
  const recs = [
    { userAgent: "Mozilla AzureHound/1.0" },
    { userAgent: "python-requests" },
    { userAgent: "AZUREHOUND" },
    { userAgent: "x%y_z" },
  ];
  assert.deepEqual(hits(one("s:\n  userAgent|contains: azurehound\ncondition: s"), recs), [0, 2]);
  assert.deepEqual(hits(one("s:\n  userAgent|startswith: PYTHON\ncondition: s"), recs), [1]);
  assert.deepEqual(hits(one("s:\n  userAgent|endswith: '/1.0'\ncondition: s"), recs), [0]);
  assert.deepEqual(
    hits(one("s:\n  userAgent|contains|all: [mozilla, hound]\ncondition: s"), recs),
    [0],
  );
  assert.deepEqual(hits(one("s:\n  userAgent: '*Hound?1*'\ncondition: s"), recs), [0]);
  assert.deepEqual(hits(one("s:\n  userAgent: 'x%y_z'\ncondition: s"), recs), [3]);
  assert.deepEqual(hits(one("s:\n  userAgent|contains|cased: Hound\ncondition: s"), recs), [0]);
  assert.match(one("s:\n  userAgent: '*Hound?1*'\ncondition: s").script!, /~ '\(\?i\)\^/);
});

Deno.test("null is absent, '' is the empty string; exists", () => {
  const recs = [{ deviceDetail: { trustType: "" } }, { deviceDetail: {} }, {
    deviceDetail: { trustType: "AzureAd" },
  }];
  assert.deepEqual(hits(one("s:\n  DeviceDetail.trusttype: ''\ncondition: s"), recs), [0]);
  assert.deepEqual(hits(one("s:\n  DeviceDetail.trusttype: null\ncondition: s"), recs), [1]);
  assert.deepEqual(
    hits(one("s:\n  DeviceDetail.trusttype|exists: true\ncondition: s"), recs),
    [0, 2],
  );
});

Deno.test("re, cidr, numbers, base64, base64offset, windash", () => {
  const recs = [
    { ipAddress: "192.168.4.7", status: { errorCode: 50126 }, userAgent: "cmd -enc SGVsbG8=" },
    { ipAddress: "2001:db8::5", status: { errorCode: 0 }, userAgent: "x /enc y" },
    { ipAddress: "::ffff:192.168.9.9", status: { errorCode: "53003" }, userAgent: "zzSGVsbG8" },
  ];
  assert.deepEqual(hits(one("s:\n  IPAddress|cidr: 192.168.0.0/16\ncondition: s"), recs), [0, 2]);
  assert.deepEqual(hits(one("s:\n  IPAddress|cidr: '2001:db8::/32'\ncondition: s"), recs), [1]);
  assert.deepEqual(hits(one("s:\n  ResultType|gt: 50000\ncondition: s"), recs), [0, 2]);
  assert.deepEqual(hits(one("s:\n  ResultType|re: '^5\\d{4}$'\ncondition: s"), recs), [0, 2]);
  assert.deepEqual(hits(one("s:\n  userAgent|base64|contains: Hello\ncondition: s"), recs), [0]);
  assert.deepEqual(hits(one("s:\n  userAgent|base64offset|contains: Hello\ncondition: s"), recs), [
    0,
    2,
  ]);
  assert.deepEqual(hits(one("s:\n  userAgent|windash|contains: ' -enc '\ncondition: s"), recs), [
    0,
    1,
  ]);
});

Deno.test("lists of maps are or; 1 of / all of them", () => {
  const c = one(
    "s1:\n  - AppDisplayName: a\n  - AppDisplayName: b\ns2:\n  ResultType: 1\ncondition: all of them",
  );
  assert.deepEqual(
    hits(c, [{ appDisplayName: "b", status: { errorCode: 1 } }, { appDisplayName: "b" }]),
    [0],
  );
});

Deno.test("refusals are typed and say why", () => {
  const text = Deno.readTextFileSync(
    new URL("../../tests/sigma/rules/refused.yml", import.meta.url),
  );
  const got = convertRules(text, { mappings: DEFAULT_MAPPINGS }).map((c) => [c.title, c.reason]);
  assert.deepEqual(got, [
    ["Keyword search", "KEYWORDS"],
    ["Placeholder", "PLACEHOLDER"],
    ["Aggregation", "AGGREGATION"],
    ["Unknown field", "UNKNOWN_FIELD"],
    ["Unsupported modifier", "UNSUPPORTED_MODIFIER"],
    ["No source", "NO_SOURCE"],
    ["Lookaround", "UNSUPPORTED_REGEX"],
  ]);
  const unknown = convertRules(text, { mappings: DEFAULT_MAPPINGS })[3]!;
  assert.match(unknown.message!, /'NoSuchColumn' exists in no shape/);
  const bad = convertRules("title: [unclosed", { mappings: DEFAULT_MAPPINGS });
  assert.equal(bad[0]!.reason, "BAD_RULE");
  const missing = convertRules(rule("s:\n  ResultType: 1\ncondition: s and t"), opts);
  assert.equal(missing[0]!.reason, "BAD_RULE");
  assert.match(missing[0]!.message!, /'t'/);
});

Deno.test("the mapping picks the record path per target, and value maps apply", () => {
  const det = "s:\n  ResultType: 50126\n  Status: Success\ncondition: s";
  const graph = one(det, "signinlogs", "graph");
  const archive = one(det, "signinlogs", "archive");
  assert.deepEqual(graph.sources, ["cloudapi://cloud/directory_service/signins/**"]);
  assert.match(archive.sources![0]!, /^azblob:\/\/archive\/insights-logs-signinlogs\//);
  const rec = { status: { errorCode: 0 } };
  assert.deepEqual(hits(one("s:\n  Status: Success\ncondition: s"), [rec]), [0]);
  assert.deepEqual(
    hits(archive, [{ resultType: "50126", properties: { status: { errorCode: 0 } } }]),
    [0],
  );
  const suite = one("s:\n  OperationName: Add user\ncondition: s", "auditlogs", "suite");
  assert.deepEqual(hits(suite, [{ Operation: "Add user." }, { Operation: "Add user" }]), [0]);
});

Deno.test("a mapping file is checked: each problem named", () => {
  assert.throws(
    () => parseMapping({ target: "x", description: "d", logsources: [{ source: "" }] }, "x"),
    /logsources\.0\.source.*logsources\.0\.time/,
  );
  const m = parseMapping({ ...DEFAULT_MAPPINGS[0]! }, "graph");
  assert.equal(m.target, "graph");
});
