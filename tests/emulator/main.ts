/**
 * Runs the cloud API emulator as a demo server:
 * `deno run -A tests/emulator/main.ts --port 9999 [--tenant contoso.onmicrosoft.com]
 * [--client demo-client] [--secret demo-secret-0123456789] [--days 2] [--per-hour 10] [--date-skew-min 0]
 * [--graph-limit 25] [--graph-unit-ms 10000]`. The Graph limit is the tenant's one budget for
 * v1.0 and beta together; set it below `cloudapi.graphRateLimit` to watch the rate adapt.
 * Point the settings `cloudapi.loginHost`, `cloudapi.graphHost` and `cloudapi.manageHost` at
 * the printed URL. Admin endpoints: GET/DELETE /_admin/requests, POST /_admin/faults,
 * POST /_admin/now, POST /_admin/skew, POST /_admin/subscriptions/disable.
 */

import { CloudEmulator } from "./emulator.ts";

function flag(name: string, fallback: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 && Deno.args[i + 1] !== undefined ? Deno.args[i + 1]! : fallback;
}

if (import.meta.main) {
  const port = Number(flag("port", "9999"));
  const tenantId = flag("tenant", "contoso.onmicrosoft.com");
  const clientId = flag("client", "demo-client");
  const secret = flag("secret", "demo-secret-0123456789");
  const days = Number(flag("days", "2"));
  const now = Date.now();
  const emulator = new CloudEmulator({
    tenants: [{ tenantId, clientId, secret }],
    seed: { from: now - days * 86_400_000, to: now, perHour: Number(flag("per-hour", "10")) },
    graphLimit: {
      limit: Number(flag("graph-limit", "25")),
      unitMs: Number(flag("graph-unit-ms", "10000")),
    },
    manageLimit: { limit: 2_000, unitMs: 60_000 },
    dateSkewMs: Number(flag("date-skew-min", "0")) * 60_000,
  });
  await emulator.start(port);
  // deno-lint-ignore no-console
  console.log(
    `cloud API emulator on ${emulator.url} (tenant ${tenantId}, GUID ${
      emulator.guidOf(tenantId)
    }, client ${clientId})`,
  );
}
