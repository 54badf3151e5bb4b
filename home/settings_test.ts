import assert from "node:assert/strict";
import { defaultSettings, loadSettings, SETTING_KEYS, SettingsError } from "./settings.ts";
import { parseByteSize } from "./byte_size.ts";

function problemsOf(text: string | null, overrides: Record<string, string> = {}): string[] {
  try {
    loadSettings(text, overrides);
  } catch (e) {
    assert.ok(e instanceof SettingsError, String(e));
    return [...e.problems];
  }
  assert.fail("expected a SettingsError");
}

Deno.test("defaultSettings() gives every documented key its default", () => {
  const s = defaultSettings();
  assert.equal(s["wgui.host"], "127.0.0.1");
  assert.equal(s["wgui.port"], 8388);
  assert.equal(s["query.retention"], 5 * 60_000);
  assert.equal(s["query.expiredMemory"], 24 * 3_600_000);
  assert.equal(s["query.maxRunning"], navigator.hardwareConcurrency);
  assert.equal(s["query.workers"], navigator.hardwareConcurrency);
  assert.equal(s["query.maxQueued"], 100);
  assert.equal(s["query.maxScriptBytes"], 128 * 1024);
  assert.equal(s["query.memoryLimit"], 1024 ** 3);
  assert.equal(s["query.resultMemoryBytes"], 32 * 1024 ** 2);
  assert.equal(s["resource.maxBytes"], 16 * 1024 ** 2);
  assert.equal(s["query.maxResultsPerUser"], 100);
  assert.equal(s["query.maxResultBytesPerUser"], 1024 ** 3);
  assert.equal(s["server.timeZone"], Intl.DateTimeFormat().resolvedOptions().timeZone);
  assert.equal(s["server.maxConnections"], 1000);
  assert.equal(s["server.headersTimeout"], 10_000);
  assert.equal(s["server.idleTimeout"], 30_000);
  assert.equal(s["log.requests"], true);
  assert.equal(s["cloudapi.loginHost"], undefined);
  assert.equal(s["cloudapi.graphHost"], undefined);
  assert.equal(s["cloudapi.manageHost"], undefined);
  assert.equal(s["cloudapi.graphRateLimit"], 25);
  assert.equal(s["cloudapi.graphRateTimeunit"], 10_000);
  assert.equal(s["cloudapi.suiteRateLimit"], 60_000);
  assert.equal(s["cloudapi.suiteRateTimeunit"], 60_000);
  assert.equal(s["cloudapi.publisherIdentifier"], undefined);
  assert.deepEqual(Object.keys(s).sort(), [...SETTING_KEYS].sort());
});

Deno.test("loadSettings() reads a valid file with comments and blank lines", () => {
  const { settings, warnings } = loadSettings(
    [
      "# Trawl settings",
      "",
      "wgui.host = 0.0.0.0",
      "wgui.port=9000",
      "   query.retention =  10 min  ",
      "query.maxRunning = 3",
      "query.maxQueued = 0",
      "query.maxScriptBytes = 512 KiB",
      "query.memoryLimit = 2 GiB",
      "query.resultMemoryBytes = 10 MB",
      "server.timeZone = Europe/Berlin",
      "log.requests = false",
      "cloudapi.loginHost = http://127.0.0.1:9000/",
      "cloudapi.suiteRateTimeunit = 1 sec",
      "  # indented comment",
    ].join("\r\n"),
    {},
  );
  assert.deepEqual(warnings, []);
  assert.equal(settings["wgui.host"], "0.0.0.0");
  assert.equal(settings["wgui.port"], 9000);
  assert.equal(settings["query.retention"], 600_000);
  assert.equal(settings["query.maxRunning"], 3);
  assert.equal(settings["query.maxQueued"], 0);
  assert.equal(settings["query.maxScriptBytes"], 512 * 1024);
  assert.equal(settings["query.memoryLimit"], 2 * 1024 ** 3);
  assert.equal(settings["query.resultMemoryBytes"], 10_000_000);
  assert.equal(settings["server.timeZone"], "Europe/Berlin");
  assert.equal(settings["log.requests"], false);
  assert.equal(settings["cloudapi.loginHost"], "http://127.0.0.1:9000");
  assert.equal(settings["cloudapi.suiteRateTimeunit"], 1_000);
});

Deno.test("loadSettings() takes the zones the engine takes, and no other", () => {
  for (const zone of ["Europe/Berlin", "utc", "Z"]) {
    assert.equal(loadSettings(`server.timeZone = ${zone}\n`, {}).settings["server.timeZone"], zone);
  }
  assert.throws(() => loadSettings("server.timeZone = Mars/Base\n", {}), SettingsError);
});

Deno.test("loadSettings() lets --set override the file", () => {
  const { settings } = loadSettings("wgui.port = 9000\nquery.retention = 1 min\n", {
    "wgui.port": "0",
    "cloudapi.graphHost": "https://graph.example:8443",
  });
  assert.equal(settings["wgui.port"], 0);
  assert.equal(settings["query.retention"], 60_000);
  assert.equal(settings["cloudapi.graphHost"], "https://graph.example:8443");
});

Deno.test("loadSettings() names the keys given in the file or by --set, unknown ones left out", () => {
  const { explicit } = loadSettings("query.retention = 1 min\nno.such = 1\n", {
    "query.maxRunning": "4",
  });
  assert.deepEqual([...explicit].sort(), ["query.maxRunning", "query.retention"]);
  assert.equal(loadSettings(null, {}).explicit.size, 0);
});

Deno.test("loadSettings() unsets an optional key given an empty value", () => {
  const { settings } = loadSettings("cloudapi.loginHost = http://a:1\n", {
    "cloudapi.loginHost": "",
  });
  assert.equal(settings["cloudapi.loginHost"], undefined);
});

Deno.test("loadSettings() warns of unknown keys and goes on", () => {
  const { settings, warnings } = loadSettings("wgui.prot = 9000\n", { "query.retension": "1 s" });
  assert.equal(settings["wgui.port"], 8388);
  assert.deepEqual(warnings, [
    "unknown setting 'wgui.prot' (settings.conf line 1) is ignored",
    "unknown setting 'query.retension' (--set) is ignored",
  ]);
});

Deno.test("loadSettings() refuses each kind of bad value, naming key, value and form", () => {
  const cases: [string, string, RegExp][] = [
    ["wgui.port", "http", /integer from 0 to 65535/],
    ["wgui.port", "65536", /integer from 0 to 65535/],
    ["wgui.port", "-1", /integer from 0 to 65535/],
    ["wgui.host", "my host", /host name or IP address/],
    ["query.retention", "5 parsecs", /positive interval/],
    ["query.retention", "0 ms", /positive interval/],
    ["query.expiredMemory", "forever", /positive interval/],
    ["query.maxRunning", "0", /integer >= 1/],
    ["query.maxRunning", "2.5", /integer >= 1/],
    ["query.maxQueued", "-3", /integer >= 0/],
    ["query.maxScriptBytes", "1 MiBs", /whole number of bytes/],
    ["query.memoryLimit", "lots", /whole number of bytes/],
    ["query.resultMemoryBytes", "0.5", /whole number of bytes/],
    ["server.timeZone", "Mars/Olympus", /IANA time zone/],
    ["log.requests", "maybe", /true or false/],
    ["cloudapi.loginHost", "ftp://x", /http or https URL/],
    ["cloudapi.manageHost", "not a url", /http or https URL/],
    ["cloudapi.graphRateLimit", "0", /integer >= 1/],
    ["cloudapi.graphRateTimeunit", "10", /positive interval/],
    ["cloudapi.publisherIdentifier", "contoso.onmicrosoft.com", /tenant id GUID/],
    ["wgui.port", "", /integer from 0 to 65535/],
  ];
  for (const [key, value, form] of cases) {
    const [problem, ...more] = problemsOf(`${key} = ${value}\n`);
    assert.deepEqual(more, [], key);
    assert.ok(problem!.includes(`'${key}'`), problem);
    assert.ok(problem!.includes(`'${value}'`), problem);
    assert.ok(problem!.includes("settings.conf line 1"), problem);
    assert.match(problem!, form);
  }
});

Deno.test("loadSettings() reports every bad key at once, and where each came from", () => {
  const problems = problemsOf("wgui.port = x\n", { "log.requests": "nope" });
  assert.equal(problems.length, 2);
  assert.match(problems[0]!, /'wgui.port' = 'x' \(settings.conf line 1\)/);
  assert.match(problems[1]!, /'log.requests' = 'nope' \(--set\)/);
});

Deno.test("loadSettings() refuses a line that is not key = value", () => {
  const [problem] = problemsOf("# ok\nwgui.port 9000\n");
  assert.match(problem!, /settings.conf line 2: expected 'key = value', found 'wgui.port 9000'/);
  assert.match(problemsOf("= 5\n")[0]!, /line 1/);
});

Deno.test("parseByteSize() reads plain bytes and binary and decimal units", () => {
  assert.equal(parseByteSize("1048576"), 1_048_576);
  assert.equal(parseByteSize("512 KiB"), 524_288);
  assert.equal(parseByteSize("64 MiB"), 67_108_864);
  assert.equal(parseByteSize("1 GiB"), 1_073_741_824);
  assert.equal(parseByteSize("10 MB"), 10_000_000);
  assert.equal(parseByteSize("1.5 KiB"), 1536);
  assert.equal(parseByteSize("100 B"), 100);
  assert.equal(parseByteSize("10 parsecs"), undefined);
  assert.equal(parseByteSize("0.3 B"), undefined);
  assert.equal(parseByteSize(""), undefined);
  assert.equal(parseByteSize("-1"), undefined);
});

Deno.test("loadSettings() reads the detections and alerts settings, and refuses bad ones", () => {
  const { settings } = loadSettings(
    "detections.tick = 1 min\nalerts.maxAttempts = 8\nalerts.allowPrivateTargets = 127.0.0.1:9000, 10.0.0.0/8\n",
    {},
  );
  assert.equal(settings["detections.tick"], 60_000);
  assert.equal(settings["alerts.maxAttempts"], 8);
  assert.equal(settings["alerts.allowPrivateTargets"]?.length, 2);
  assert.equal(defaultSettings()["alerts.allowPrivateTargets"], undefined);
  assert.equal(defaultSettings()["detections.lease"], 600_000);
  const bad: [string, RegExp][] = [
    ["detections.tick = 0 sec", /'detections.tick'.*interval from 1 sec to 1 h/],
    ["alerts.maxAttempts = 0", /'alerts.maxAttempts'.*from 1 to 100/],
    ["alerts.allowPrivateTargets = http://x/", /'alerts.allowPrivateTargets'.*host\[:port\]/],
    ["alerts.allowPrivateTargets = 10.0.0.0/99", /'alerts.allowPrivateTargets'/],
    ["alerts.retryDelay = 2 h\nalerts.maxRetryDelay = 1 h", /shorter than 'alerts.retryDelay'/],
  ];
  for (const [text, why] of bad) {
    assert.throws(() => loadSettings(text + "\n", {}), (e: Error) => why.test(e.message), text);
  }
});
