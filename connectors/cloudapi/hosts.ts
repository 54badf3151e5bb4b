/** Token, Graph and Management Activity hosts per suite plan (CLOUDAPI.md §2). */

export type SuitePlan = "ent" | "gcc" | "gcc_high" | "dod";

export const SUITE_PLANS: readonly SuitePlan[] = ["ent", "gcc", "gcc_high", "dod"];

/** Base URLs without a trailing slash, e.g. `https://graph.microsoft.com`. */
export interface CloudHosts {
  readonly login: string;
  readonly graph: string;
  readonly manage: string;
}

/** URL overrides from the settings (`cloudapi.loginHost`, `...graphHost`, `...manageHost`). */
export interface HostOverrides {
  readonly loginHost?: string;
  readonly graphHost?: string;
  readonly manageHost?: string;
}

/** The hosts of `plan`, each replaced by its override when one is set. */
export function hostsFor(plan: SuitePlan, overrides: HostOverrides = {}): CloudHosts {
  const base = planHosts(plan);
  return {
    login: trimSlash(overrides.loginHost || base.login),
    graph: trimSlash(overrides.graphHost || base.graph),
    manage: trimSlash(overrides.manageHost || base.manage),
  };
}

function planHosts(plan: SuitePlan): CloudHosts {
  switch (plan) {
    case "ent":
      return https("login.microsoftonline.com", "graph.microsoft.com", "manage.office.com");
    case "gcc":
      return https("login.microsoftonline.com", "graph.microsoft.com", "manage-gcc.office.com");
    case "gcc_high":
      return https("login.microsoftonline.us", "graph.microsoft.us", "manage.office365.us");
    case "dod":
      return https(
        "login.microsoftonline.us",
        "dod-graph.microsoft.us",
        "manage.protection.apps.mil",
      );
  }
}

function https(login: string, graph: string, manage: string): CloudHosts {
  return { login: `https://${login}`, graph: `https://${graph}`, manage: `https://${manage}` };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}
