/**
 * Which addresses a server-made request (an alert's webhook, docs/detections.md) may go to: not
 * the server's own network unless an admin allows it (`alerts.allowPrivateTargets`). Refused:
 * loopback (127.0.0.0/8, ::1), link-local (169.254.0.0/16 with the cloud metadata address
 * 169.254.169.254, fe80::/10), private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7),
 * unspecified (0.0.0.0/8, ::), multicast and reserved (224/4, 240/4, ff00::/8); IPv4 written in
 * IPv6 (::ffff:a.b.c.d, 64:ff9b::a.b.c.d) is judged as the IPv4 it carries.
 *
 * An allow list holds host names or addresses with an optional port (`hooks.lan`,
 * `127.0.0.1:9000`, `[::1]:8080`) and CIDRs (`10.20.0.0/16`, `fd00::/8`).
 */

import { formatIp, netContains, parseIp, parseNet } from "../engine/values/ip.ts";
import { IpAddr, type IpNet } from "../engine/values/values.ts";

type Net = IpNet;

const net = (cidr: string): Net => parseNet(cidr)!;

/** The ranges of the server's own network, each with why it is refused. */
const RANGES: readonly (readonly [Net, string])[] = ([
  ["0.0.0.0/8", "an unspecified address"],
  ["10.0.0.0/8", "a private address"],
  ["100.64.0.0/10", "a private (shared) address"],
  ["127.0.0.0/8", "a loopback address"],
  ["169.254.169.254/32", "the cloud metadata address"],
  ["169.254.0.0/16", "a link-local address"],
  ["172.16.0.0/12", "a private address"],
  ["192.168.0.0/16", "a private address"],
  ["224.0.0.0/4", "a multicast address"],
  ["240.0.0.0/4", "a reserved or broadcast address"],
  ["::/128", "an unspecified address"],
  ["::1/128", "a loopback address"],
  ["fc00::/7", "a private (unique local) address"],
  ["fe80::/10", "a link-local address"],
  ["fec0::/10", "a site-local address"],
  ["ff00::/8", "a multicast address"],
] as const).map(([cidr, why]) => [net(cidr), why] as const);

/** IPv6 prefixes that carry an IPv4 address in their last 32 bits besides ::ffff:0:0/96 (which
 * netContains already reads as IPv4): NAT64 and the deprecated IPv4-compatible form. */
const NAT64 = net("64:ff9b::/96");
const COMPATIBLE = net("::/96");
const NOT_COMPATIBLE = net("::/127");

/** An IP address (IPv6 with or without brackets), null when the text is none. */
function parseAddress(text: string): IpAddr | null {
  return parseIp(text.replace(/^\[(.*)\]$/, "$1"));
}

/** `ip` as the IPv4 address it carries (NAT64, IPv4-compatible), or itself. */
function carried(ip: IpAddr): IpAddr {
  const v4 = netContains(NAT64, ip) ||
    (netContains(COMPATIBLE, ip) && !netContains(NOT_COMPATIBLE, ip));
  return v4 ? new IpAddr(4, Number((ip.bits as bigint) & 0xffffffffn)) : ip;
}

/**
 * Why `text` (an IP address) is in the server's own network, or undefined when it is public
 * (or no IP address at all).
 */
export function privateAddressReason(text: string): string | undefined {
  const ip = parseAddress(text);
  if (!ip) return undefined;
  const address = carried(ip);
  return RANGES.find(([range]) => netContains(range, address))?.[1];
}

/** One entry of an allow list. */
export type AllowEntry =
  | { readonly kind: "host"; readonly host: string; readonly port?: string }
  | { readonly kind: "cidr"; readonly net: Net };

/** The entries of a comma-separated allow list; a string naming the first bad entry. */
export function parseAllowList(text: string): AllowEntry[] | string {
  const out: AllowEntry[] = [];
  for (const raw of text.split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    if (/^.+\/\d{1,3}$/.test(item)) {
      const cidr = parseNet(item);
      if (!cidr) return `'${item}' is not a CIDR`;
      out.push({ kind: "cidr", net: cidr });
      continue;
    }
    const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/.exec(item);
    const plain = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(item);
    const bare6: (string | undefined)[] | null = parseAddress(item) && item.includes(":")
      ? [item, item, undefined]
      : null;
    const m = bracketed ?? bare6 ?? plain;
    if (!m) return `'${item}' is neither a host[:port] nor a CIDR`;
    const host = normalHost(m[1]!);
    out.push({ kind: "host", host, ...(m[2] !== undefined ? { port: m[2] } : {}) });
  }
  return out;
}

/** A host as compared: lower case, IPv6 without brackets and in one spelling. */
function normalHost(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const ip = bare.includes(":") ? parseAddress(bare) : null;
  return ip ? formatIp(ip) : bare;
}

/** Is `host` (name or address, as in a URL) with `port` allowed by a host entry? */
export function allowedHost(list: readonly AllowEntry[], host: string, port: string): boolean {
  const h = normalHost(host);
  return list.some((e) => e.kind === "host" && e.host === h && (e.port ?? port) === port);
}

/** Is the address `ip` inside a CIDR of the list? */
export function allowedAddress(list: readonly AllowEntry[], ip: string): boolean {
  const address = parseAddress(ip);
  return address !== null &&
    list.some((e) => e.kind === "cidr" && netContains(e.net, address));
}

/** The default port of a URL's scheme when it names none. */
function portOf(url: URL): string {
  return url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
}

/**
 * Why a webhook URL may not be used, judged without resolving its name (when it is created or
 * changed): not http(s), credentials in it, a loopback name, or an address of the server's own
 * network that the list does not allow. Undefined when it may be used.
 */
export function refusedUrl(text: string, list: readonly AllowEntry[]): string | undefined {
  if (!URL.canParse(text)) return `'${text}' is not a URL`;
  const url = new URL(text);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `only http and https webhooks are allowed, not '${url.protocol}'`;
  }
  const host = url.hostname;
  if (allowedHost(list, host, portOf(url))) return undefined;
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  const why = privateAddressReason(bare);
  if (why !== undefined && !allowedAddress(list, bare)) {
    return `the webhook's host ${host} is ${why}, which an admin has not allowed (setting alerts.allowPrivateTargets)`;
  }
  if (why === undefined && parseAddress(bare) === null) {
    const name = host.toLowerCase().replace(/\.$/, "");
    if (name === "localhost" || name.endsWith(".localhost")) {
      return `the webhook's host ${host} is a loopback name, which an admin has not allowed (setting alerts.allowPrivateTargets)`;
    }
  }
  return undefined;
}

/** Resolves a host name to its addresses (A and AAAA). */
export type Resolver = (host: string) => Promise<readonly string[]>;

/** The A and AAAA answers of the DNS for `host`. */
export const dnsResolver: Resolver = async (host) => {
  const answers = await Promise.allSettled([
    Deno.resolveDns(host, "A"),
    Deno.resolveDns(host, "AAAA"),
  ]);
  return answers.flatMap((a) => a.status === "fulfilled" ? a.value : []);
};

/** Where a webhook is called: the address it was checked at, or why it may not be called. */
export type Target =
  | { readonly refused: string }
  | { readonly url: URL; readonly address: string };

/**
 * The address a webhook URL is called at (at delivery), checked: refusedUrl, then its name is
 * resolved once and every address it has must be public or allowed by a CIDR (or the host itself
 * listed). The connection goes to the first of those addresses and no other (actors/alert_outbox.ts):
 * a name resolved again at connect time could answer 127.0.0.1 the second time (DNS rebinding).
 */
export async function checkedTarget(
  text: string,
  list: readonly AllowEntry[],
  resolve: Resolver = dnsResolver,
): Promise<Target> {
  const refused = refusedUrl(text, list);
  if (refused !== undefined) return { refused };
  const url = new URL(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (parseAddress(host) !== null) return { url, address: host };
  let addresses: readonly string[];
  try {
    addresses = await resolve(host);
  } catch {
    addresses = [];
  }
  // Only addresses: a resolver's answer that is none is not connected to.
  const usable = addresses.filter((a) => parseAddress(a) !== null);
  if (usable.length === 0) return { refused: `the webhook's host ${host} could not be resolved` };
  if (!allowedHost(list, url.hostname, portOf(url))) {
    for (const ip of usable) {
      const why = privateAddressReason(ip);
      if (why !== undefined && !allowedAddress(list, ip)) {
        return {
          refused:
            `the webhook's host ${host} resolves to ${ip}, ${why}, which an admin has not allowed (setting alerts.allowPrivateTargets)`,
        };
      }
    }
  }
  return { url, address: usable[0]! };
}

/**
 * Why a webhook URL may not be called now (at delivery), its name resolved (checkedTarget);
 * undefined when it may.
 */
export async function refusedTarget(
  text: string,
  list: readonly AllowEntry[],
  resolve: Resolver = dnsResolver,
): Promise<string | undefined> {
  const target = await checkedTarget(text, list, resolve);
  return "refused" in target ? target.refused : undefined;
}
