/**
 * The front end on a typical 10-line script: `deno bench bench/front_bench.ts`.
 * The target is well under 1 ms per check().
 */

import { check } from "../engine/front/front.ts";

export const TYPICAL_SCRIPT = `init(ip::IPADDR, since: T('2024-01-01 00:00:00'));   // arguments
$access = '''IPV4:client ' - ' NSPACE:user ' [' HTTPDATE:time '] "' WORD:method ' '
             NSPACE:path ' ' NSPACE:proto '" ' INT:status ' ' INT?:bytes LD EOL''';
@hits = PARSE(pattern: $access, src: '/shared/logs/access-*.log', from: $since);
@hits
| filter(client = $ip and time >= $since and status in (200, 304) and path like '/api%')
| select(time_trunc(time, 1 hour) as hour, count(*) as requests, sum(bytes) as bytes)
| group(hour)
| sort(hour desc)
| save('/user/hourly.sxt');`;

Deno.bench("check() on a typical 10-line script", () => {
  const r = check(TYPICAL_SCRIPT);
  if (r.diagnostics.length > 0) throw new Error(r.diagnostics[0]!.message);
});
