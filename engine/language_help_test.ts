import assert from "node:assert/strict";
import { languageWords } from "./language.ts";

/** The lowest and highest number of arguments a signature shows (`[, x]` optional, `...` any). */
function arityOf(signature: string): { min: number; max: number } {
  const open = signature.indexOf("(");
  if (open < 0) return { min: 0, max: 0 };
  // Quoted examples ('yyyy-MM-dd HH:mm', ',') hold no arguments.
  const inner = signature.slice(open + 1, signature.lastIndexOf(")")).replace(/'[^']*'/g, "s");
  if (inner.trim() === "") return { min: 0, max: 0 };
  let min = 0;
  let max = 0;
  let depth = 0;
  let optional = 0;
  let part = "";
  const end = () => {
    if (part.trim() === "...") max = Infinity;
    else if (part.trim() !== "") {
      max++;
      if (optional === 0) min++;
    }
    part = "";
  };
  for (const ch of inner) {
    if (ch === "[") {
      end();
      optional++;
    } else if (ch === "]") {
      end();
      optional--;
    } else if (ch === "(") {
      depth++;
      part += ch;
    } else if (ch === ")") {
      depth--;
      part += ch;
    } else if (ch === "," && depth === 0) end();
    else part += ch;
  }
  end();
  return { min, max };
}

Deno.test("every command, source, function and matcher has a signature and a description", () => {
  const words = languageWords();
  const named = (kind: string) => words.help.filter((h) => h.kind === kind).map((h) => h.name);
  assert.deepEqual(named("command"), words.commands);
  assert.deepEqual(named("source"), words.sources);
  assert.deepEqual(named("function"), words.functions.map((f) => f.name));
  assert.deepEqual(named("matcher"), words.matchers);
  for (const h of words.help) {
    assert.ok(
      h.description.length > 5 && h.description.length <= 100,
      `${h.name}: ${h.description}`,
    );
    assert.ok(!h.description.includes("\n"), h.name);
    assert.ok(
      h.signature.toLowerCase().startsWith(h.name.toLowerCase()),
      `${h.name}'s signature ${h.signature}`,
    );
  }
});

Deno.test("a function's signature takes as many arguments as the checker allows", () => {
  const words = languageWords();
  for (const f of words.functions) {
    const help = words.help.find((h) => h.kind === "function" && h.name === f.name)!;
    assert.deepEqual(
      arityOf(help.signature),
      { min: f.minArgs, max: f.maxArgs ?? Infinity },
      `${help.signature} for ${JSON.stringify(f)}`,
    );
  }
});
