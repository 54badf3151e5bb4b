/** IANA time zones, checked with the runtime's own Intl data. */

/** Is `zone` a time zone the runtime knows (`Europe/Berlin`, `UTC`)? */
export function isTimeZone(zone: string): boolean {
  if (zone.trim() === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone of this process (from TZ or the system), as Intl reports it. */
export function processTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
