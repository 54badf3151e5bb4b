// deno-lint-ignore-file no-console
/**
 * How many Sigma rules convert, and why the others do not: converts every `.yml` under the
 * folders given (a checkout of github.com/SigmaHQ/sigma: rules/cloud/azure, rules/cloud/m365)
 * with the default mappings and prints counts by target and by refusal reason.
 *
 *   deno run --allow-read --allow-env tools/sigma_coverage.ts <sigma>/rules/cloud/azure <sigma>/rules/cloud/m365
 *   ... --list    also print each refused rule with its message
 *
 * Every converted script is also parsed and checked by the engine's front end (engine/front/
 * front.ts `check`); one that does not pass is counted as `SCRIPT_ERROR` (a bug of the converter).
 */

import { convertRules } from "../connectors/sigma/convert.ts";
import { DEFAULT_MAPPINGS } from "../connectors/sigma/mapping.ts";
import { check } from "../engine/front/front.ts";
import { formatDiagnostic } from "../engine/front/diagnostics.ts";

async function* ymlFiles(dir: string): AsyncGenerator<string> {
  const entries = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* ymlFiles(path);
    else if (e.name.endsWith(".yml") || e.name.endsWith(".yaml")) yield path;
  }
}

const list = Deno.args.includes("--list");
const dirs = Deno.args.filter((a) => !a.startsWith("--"));
if (dirs.length === 0) {
  console.error("usage: tools/sigma_coverage.ts <folder of rules>... [--list]");
  Deno.exit(2);
}
let total = 0;
let converted = 0;
const byTarget = new Map<string, number>();
const byReason = new Map<string, number>();
const refused: string[] = [];
for (const dir of dirs) {
  for await (const file of ymlFiles(dir)) {
    for (const c of convertRules(await Deno.readTextFile(file), { mappings: DEFAULT_MAPPINGS })) {
      total++;
      const checked = c.ok ? check(c.script!) : undefined;
      if (checked && !checked.script) {
        byReason.set("SCRIPT_ERROR", (byReason.get("SCRIPT_ERROR") ?? 0) + 1);
        refused.push(
          `SCRIPT_ERROR\t${file}\t${checked.diagnostics.map(formatDiagnostic).join("; ")}`,
        );
      } else if (c.ok) {
        converted++;
        byTarget.set(c.target!, (byTarget.get(c.target!) ?? 0) + 1);
      } else {
        byReason.set(c.reason!, (byReason.get(c.reason!) ?? 0) + 1);
        refused.push(`${c.reason}\t${file.slice(file.lastIndexOf("/") + 1)}\t${c.message}`);
      }
    }
  }
}
console.log(`rules: ${total}, converted: ${converted} (${(100 * converted / total).toFixed(0)}%)`);
for (const [t, n] of [...byTarget].sort((a, b) => b[1] - a[1])) console.log(`  target ${t}: ${n}`);
for (const [r, n] of [...byReason].sort((a, b) => b[1] - a[1])) console.log(`  refused ${r}: ${n}`);
if (list) { for (const line of refused.sort()) console.log(line); }
