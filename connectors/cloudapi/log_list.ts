/**
 * Log lists of a definition: `<uri_name>:<log_type>|<lag_time>|<up_to_date_age>`, comma
 * separated, e.g. `audits:audits|1 h|15 min, logins:signins|2 h|10 min`.
 */

import { parseInterval } from "../../engine/values/interval.ts";
import { type Family, FAMILY_SPECS } from "./families.ts";

export interface LogSpec {
  readonly family: Family;
  /** The name in URIs and storage paths. */
  readonly uriName: string;
  readonly logType: string;
  /** How long after an hour ends its records may still arrive (availability lag). */
  readonly lagMs: number;
  /** How often an hour within the lag is fetched again (update frequency). */
  readonly updateMs: number;
}

const URI_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Parses one log list; returns the logs or the problems found (each a complete sentence). */
export function parseLogList(
  family: Family,
  text: string,
): { ok: true; logs: LogSpec[] } | { ok: false; problems: string[] } {
  const logs: LogSpec[] = [];
  const problems: string[] = [];
  const allowed = Object.keys(FAMILY_SPECS[family].logTypes);
  const entries = text.split(",").map((e) => e.trim()).filter((e) => e !== "");
  for (const entry of entries) {
    const m = /^([^:|]+):([^|]+)\|([^|]+)\|([^|]+)$/.exec(entry);
    if (!m) {
      problems.push(
        `entry '${entry}' is not of the form <uri_name>:<log_type>|<lag_time>|<up_to_date_age>`,
      );
      continue;
    }
    // The pattern's four groups always take part in a match.
    const [uriName, logType, lagText, updateText] = m.slice(1).map((s) => s.trim()) as [
      string,
      string,
      string,
      string,
    ];
    if (!URI_NAME.test(uriName)) {
      problems.push(
        `uri name '${uriName}' in '${entry}' may hold only letters, digits, '_', '.' and '-'`,
      );
    }
    if (!allowed.includes(logType)) {
      problems.push(
        `log type '${logType}' in '${entry}' is not allowed; allowed: ${allowed.join(", ")}`,
      );
    }
    const lag = parseInterval(lagText);
    const update = parseInterval(updateText);
    if (!lag.ok) problems.push(`lag time in '${entry}': ${lag.message}`);
    if (!update.ok) problems.push(`update frequency in '${entry}': ${update.message}`);
    if (lag.ok && update.ok) {
      if (update.millis <= 0) {
        problems.push(`update frequency '${updateText}' in '${entry}' must be above zero`);
      } else if (update.millis > lag.millis) {
        problems.push(
          `update frequency '${updateText}' in '${entry}' exceeds the lag time '${lagText}'`,
        );
      }
      logs.push({ family, uriName, logType, lagMs: lag.millis, updateMs: update.millis });
    }
  }
  const seen = new Set<string>();
  for (const l of logs) {
    if (seen.has(l.uriName)) problems.push(`uri name '${l.uriName}' appears twice`);
    seen.add(l.uriName);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, logs };
}
