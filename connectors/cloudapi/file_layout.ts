/**
 * Where a fetched hour is stored:
 * `<log_id>/<log_name>/yyyy/MM/dd/[HH/][<log_type>/]yyyyMMdd[HH].<log_name>[.<log_type>].json`
 * under `<home>/engine_data/cloud_api/<store>/`.
 *
 * - The hour appears as a folder `HH/` (filePathIncludesHour) and/or after the date in the name
 *   (fileNameIncludesHour). With neither, one file holds the whole local day.
 * - The log type appears as a folder after the date and hour folders (filePathIncludesApp)
 *   and/or as a part before `.json` in the name (fileNameIncludesApp).
 */

import type { CloudApiDefinition } from "./definition.ts";
import { FAMILY_SPECS } from "./families.ts";
import type { LogSpec } from "./log_list.ts";
import { hourFields } from "./zoned_hours.ts";

export type Placement = Pick<
  CloudApiDefinition,
  "fileNameIncludesApp" | "filePathIncludesApp" | "fileNameIncludesHour" | "filePathIncludesHour"
>;

/** Does a file hold a single hour (else a whole day)? */
export function hourlyFiles(p: Placement): boolean {
  return p.fileNameIncludesHour || p.filePathIncludesHour;
}

/** Path of the file holding `hour` of `log`, relative to the store's folder, `/`-separated. */
export function hourFilePath(log: LogSpec, hour: number, zone: string, p: Placement): string {
  const f = hourFields(hour, zone);
  const dirs = [FAMILY_SPECS[log.family].logId, log.uriName, f.yyyy, f.MM, f.dd];
  if (p.filePathIncludesHour) dirs.push(f.HH);
  if (p.filePathIncludesApp) dirs.push(log.logType);
  let name = `${f.yyyy}${f.MM}${f.dd}`;
  if (p.fileNameIncludesHour) name += f.HH;
  name += `.${log.uriName}`;
  if (p.fileNameIncludesApp) name += `.${log.logType}`;
  return [...dirs, `${name}.json`].join("/");
}
