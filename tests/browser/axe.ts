/**
 * axe-core (npm) run in a page of the console: its findings of impact "critical" or "serious",
 * each as "rule: help (selectors)". The script goes in through the DevTools protocol
 * (`page.evaluate`), which the page's Content-Security-Policy does not stop.
 */

import axe from "axe-core";
import type { Page } from "playwright-core";

interface Finding {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly unknown[] }[];
}

export async function seriousAxeFindings(page: Page): Promise<string[]> {
  const loaded = await page.evaluate("typeof globalThis.axe === 'object'");
  if (!loaded) await page.evaluate((axe as unknown as { source: string }).source);
  const violations = await page.evaluate(
    `axe.run(document).then((r) => r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })),
    })))`,
  ) as Finding[];
  return violations
    .filter((v) => v.impact === "critical" || v.impact === "serious")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}
