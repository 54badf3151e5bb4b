import assert from "node:assert/strict";
import { compileGlob, matchGlob, matchPath } from "./glob.ts";
import { pathMatcher } from "./cloudapi/uri_pattern.ts";
import { type WalkEntry, type WalkFs, walkGlob } from "./file/walk_glob.ts";
import { collect } from "../tests/support/temp_tree.ts";
import { cpuStopwatch } from "../tests/support/thread_cpu.ts";

Deno.test("compileGlob() keeps the leading literal segments as the base", () => {
  assert.equal(compileGlob("/shared/logs/$yyyy$/*.log").base, "/shared/logs");
  assert.equal(compileGlob("/shared/logs/a.log").base, "/shared/logs");
  assert.equal(compileGlob("logs/**/x.json").base, "logs");
  assert.equal(compileGlob("*.log").base, "");
  assert.equal(compileGlob("/shared/**").segments.length, 1);
  assert.equal(compileGlob("/shared/logs/$yyyy$/*.log").hasTime, true);
  assert.equal(compileGlob("/shared/logs/*.log").hasTime, false);
});

const table: [pattern: string, path: string, matches: boolean][] = [
  ["/s/*.log", "/s/a.log", true],
  ["/s/*.log", "/s/.log", true],
  ["/s/*.log", "/s/a.txt", false],
  ["/s/*.log", "/s/x/a.log", false], // `*` stays within a segment
  ["/s/a*b*c", "/s/abc", true],
  ["/s/a*b*c", "/s/a-b-c", true],
  ["/s/a*b*c", "/s/a-c", false],
  ["/s/a.log", "/s/a.log", true],
  ["/s/a.log", "/s/aXlog", false], // `.` is literal
  ["/s/(x)+.log", "/s/(x)+.log", true], // regex characters are literal
  ["/s/a?.log", "/s/ab.log", true], // `?` is one character
  ["/s/a?.log", "/s/a.log", false],
  ["/s/a?.log", "/s/abc.log", false],
  ["/s/?/a.log", "/s/x/a.log", true],
  ["/s/?/a.log", "/s/xy/a.log", false],
  ["/s/a?.log", "/s/aé.log", true], // one character, not one UTF-16 unit
  ["/s/**/*.log", "/s/a.log", true], // `**` matches no segment too
  ["/s/**/*.log", "/s/x/y/z/a.log", true],
  ["/s/**", "/s/x/y/a.log", true],
  ["/s/**/b/*.log", "/s/x/b/a.log", true],
  ["/s/**/b/*.log", "/s/b/a.log", true],
  ["/s/**/b/*.log", "/s/x/c/a.log", false],
  ["/s/$yyyy$/$MM$/*.log", "/s/2024/05/a.log", true],
  ["/s/$yyyy$/$MM$/*.log", "/s/2024/5/a.log", false], // two digits
  ["/s/$yyyy$/$MM$/*.log", "/s/24/05/a.log", false],
  ["/s/app-$yyyy$$MM$$dd$.log", "/s/app-20240517.log", true],
  ["/s/app-$yyyy$$MM$$dd$.log", "/s/app-2024051.log", false],
  ["/s/$yyyy$/$yyyy$-$MM$.log", "/s/2024/2024-05.log", true],
  ["/s/$yyyy$/$yyyy$-$MM$.log", "/s/2024/2023-05.log", false], // a field repeats the same value
];

for (const [pattern, path, matches] of table) {
  Deno.test(`glob '${pattern}' ${matches ? "matches" : "does not match"} '${path}'`, () => {
    const glob = compileGlob(pattern);
    const rest = path.slice(glob.base.length).split("/").filter((s) => s !== "");
    assert.equal(path.startsWith(glob.base), true);
    assert.equal(matchPath(glob, rest) !== null, matches);
  });
}

Deno.test("matchPath() captures the time fields of the path", () => {
  const glob = compileGlob("/s/$yyyy$/$MM$/$dd$/app-$HH$$mm$.log");
  assert.deepEqual(matchPath(glob, ["2024", "05", "17", "app-0930.log"]), {
    yyyy: 2024,
    MM: 5,
    dd: 17,
    HH: 9,
    mm: 30,
  });
});

Deno.test("matchGlob() matches a whole path, its base included", () => {
  const glob = compileGlob("logs/$yyyy$/*.json");
  assert.deepEqual(matchGlob(glob, "logs/2024/a.json"), { yyyy: 2024 });
  assert.equal(matchGlob(glob, "other/2024/a.json"), null);
  assert.equal(matchGlob(glob, "logs"), null);
});

/** The files of `paths` as the file datastores walk them (a tree in memory). */
function memoryFs(paths: readonly string[]): WalkFs {
  const entries = (folder: string): WalkEntry[] => {
    const prefix = folder === "" ? "" : folder + "/";
    const seen = new Map<string, WalkEntry>();
    for (const p of paths.filter((p) => p.startsWith(prefix))) {
      const [name, ...rest] = p.slice(prefix.length).split("/");
      seen.set(name!, { name: name!, kind: rest.length > 0 ? "dir" : "file" });
    }
    return [...seen.values()];
  };
  return {
    list: (path) => Promise.resolve(entries(path)),
    probe(path) {
      if (paths.includes(path)) return Promise.resolve("file");
      return Promise.resolve(paths.some((p) => p.startsWith(path + "/")) ? "dir" : null);
    },
  };
}

Deno.test("`?` and the other globs match the same files in file paths and cloudapi:// paths", async () => {
  const paths = [
    "directory_service/audits/2026/03/10/a.json",
    "directory_service/audits/2026/03/10/ab.json",
    "directory_service/audits/2026/03/1x/a.json",
    "directory_service/signins/2026/03/10/b.json",
    "cloud_activity/audits/2026/03/10/c.json",
  ];
  const patterns = [
    "directory_service/audits/2026/03/1?/?.json",
    "directory_service/?udits/**",
    "*/audits/$yyyy$/$MM$/$dd$/*",
    "directory_service/**/a?.json",
    "directory_service/audits/2026/03/10/a.json",
  ];
  const fs = memoryFs(paths);
  const options = { timeZone: "UTC", signal: new AbortController().signal };
  for (const pattern of patterns) {
    const files = await collect(walkGlob(compileGlob(pattern), fs, options));
    const cloud = paths.filter(pathMatcher(pattern));
    assert.deepEqual(files.map((f) => f.path).sort(), cloud.sort(), pattern);
    assert.ok(cloud.length > 0, pattern);
  }
});

Deno.test("a glob that backtracks exponentially as a RegExp matches a long name at once", () => {
  const glob = compileGlob("/user/*a*a*a*a*a*a*a*b");
  const started = cpuStopwatch();
  assert.equal(matchPath(glob, ["a".repeat(5000)]), null);
  assert.notEqual(matchPath(glob, ["a".repeat(5000) + "b"]), null);
  assert.ok(started() < 500, `${started()} ms`);
});

Deno.test("a time field after a star takes its digits where the rest of the name fits", () => {
  const glob = compileGlob("/s/*-$yyyy$$MM$.log");
  assert.deepEqual(matchPath(glob, ["app-x-202405.log"]), { yyyy: 2024, MM: 5 });
  assert.equal(matchPath(glob, ["app-20245.log"]), null);
});

Deno.test("? is one character of a name, also beside stars and time fields", () => {
  assert.notEqual(matchPath(compileGlob("/s/a?c.log"), ["abc.log"]), null);
  assert.equal(matchPath(compileGlob("/s/a?c.log"), ["ac.log"]), null);
  assert.equal(matchPath(compileGlob("/s/a?c.log"), ["abbc.log"]), null);
  assert.deepEqual(matchPath(compileGlob("/s/?*-$yyyy$.log"), ["x-2024.log"]), { yyyy: 2024 });
});

Deno.test("a time field inside a segment (Azure's y=$yyyy$/m=$MM$) captures its digits, the rest literal", () => {
  const g = compileGlob("**/y=$yyyy$/m=$MM$/d=$dd$/h=$HH$/m=00/PT1H.json");
  assert.deepEqual(
    matchGlob(g, "tenantId=abc/y=2024/m=05/d=01/h=13/m=00/PT1H.json"),
    { yyyy: 2024, MM: 5, dd: 1, HH: 13 },
  );
  assert.equal(matchGlob(g, "tenantId=abc/y=2024/m=05/d=01/h=13/m=30/PT1H.json"), null);
  assert.equal(matchGlob(g, "y=24/m=05/d=01/h=13/m=00/PT1H.json"), null);
  assert.equal(matchGlob(g, "x=2024/m=05/d=01/h=13/m=00/PT1H.json"), null);
});
