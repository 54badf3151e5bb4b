/** The zone of this process (from TZ or the system), as Intl reports it. */
export function processTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
