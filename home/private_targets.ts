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

/** An address as 16 bytes (IPv4 as ::ffff:a.b.c.d) and whether it was written as IPv4. */
interface Address {
  readonly bytes: Uint8Array;
  readonly v4: boolean;
}

function parseV4(text: string): Uint8Array | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? new Uint8Array(parts) : undefined;
}

function parseV6(text: string): Uint8Array | undefined {
  let t = text.replace(/%.*$/, "");
  // A trailing dotted IPv4 becomes two groups.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (dotted) {
    const v4 = parseV4(dotted[2]!);
    if (!v4) return undefined;
    t = dotted[1]! + ((v4[0]! << 8) | v4[1]!).toString(16) + ":" +
      ((v4[2]! << 8) | v4[3]!).toString(16);
  }
  const halves = t.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string) => s === "" ? [] : s.split(":");
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(all[i]!)) return undefined;
    const g = parseInt(all[i]!, 16);
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  }
  return out;
}

/** An IP address (IPv6 with or without brackets), undefined when the text is none. */
function parseAddress(text: string): Address | undefined {
  const v4 = parseV4(text);
  if (v4) {
    const bytes = new Uint8Array(16);
    bytes[10] = 0xff;
    bytes[11] = 0xff;
    bytes.set(v4, 12);
    return { bytes, v4: true };
  }
  const inner = /^\[(.*)\]$/.exec(text)?.[1] ?? text;
  const v6 = inner.includes(":") ? parseV6(inner) : undefined;
  return v6 ? { bytes: v6, v4: false } : undefined;
}

/** Does `bytes` start with the first `bits` bits of `prefix`? */
function inPrefix(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((bytes[byte]! & mask) !== (prefix[byte]! & mask)) return false;
  }
  return true;
}

const V4_RANGES: readonly [string, number, string][] = [
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a private (shared) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.169.254", 32, "the cloud metadata address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.168.0.0", 16, "a private address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved or broadcast address"],
];

const V6_RANGES: readonly [string, number, string][] = [
  ["::", 128, "an unspecified address"],
  ["::1", 128, "a loopback address"],
  ["fc00::", 7, "a private (unique local) address"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"],
];

/**
 * Why `text` (an IP address) is in the server's own network, or undefined when it is public
 * (or no IP address at all).
 */
export function privateAddressReason(text: string): string | undefined {
  const a = parseAddress(text);
  if (!a) return undefined;
  let bytes = a.bytes;
  // IPv4 carried in IPv6: mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96), compatible (::/96).
  const mapped = inPrefix(bytes, parseV6("::ffff:0:0")!, 96);
  const nat64 = inPrefix(bytes, parseV6("64:ff9b::")!, 96);
  const compatible = inPrefix(bytes, new Uint8Array(16), 96) &&
    !inPrefix(bytes, new Uint8Array(16), 127);
  if (mapped || nat64 || compatible) {
    const v4 = new Uint8Array(16);
    v4[10] = 0xff;
    v4[11] = 0xff;
    v4.set(bytes.subarray(12), 12);
    bytes = v4;
  }
  if (inPrefix(bytes, parseV6("::ffff:0:0")!, 96)) {
    for (const [net, bits, why] of V4_RANGES) {
      if (inPrefix(bytes, parseAddress(net)!.bytes, 96 + bits)) return why;
    }
    return undefined;
  }
  for (const [net, bits, why] of V6_RANGES) {
    if (inPrefix(bytes, parseV6(net)!, bits)) return why;
  }
  return undefined;
}

/** One entry of an allow list. */
export type AllowEntry =
  | { readonly kind: "host"; readonly host: string; readonly port?: string }
  | { readonly kind: "cidr"; readonly prefix: Uint8Array; readonly bits: number };

/** The entries of a comma-separated allow list; a string naming the first bad entry. */
export function parseAllowList(text: string): AllowEntry[] | string {
  const out: AllowEntry[] = [];
  for (const raw of text.split(",")) {
    const item = raw.trim();
    if (item === "") continue;
    const cidr = /^(.+)\/(\d{1,3})$/.exec(item);
    if (cidr) {
      const a = parseAddress(cidr[1]!);
      const bits = Number(cidr[2]);
      if (!a || bits > (a.v4 ? 32 : 128)) return `'${item}' is not a CIDR`;
      out.push({ kind: "cidr", prefix: a.bytes, bits: a.v4 ? 96 + bits : bits });
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
  const a = bare.includes(":") ? parseAddress(bare) : undefined;
  return a ? [...a.bytes].map((b) => b.toString(16).padStart(2, "0")).join("") : bare;
}

/** Is `host` (name or address, as in a URL) with `port` allowed by a host entry? */
export function allowedHost(list: readonly AllowEntry[], host: string, port: string): boolean {
  const h = normalHost(host);
  return list.some((e) => e.kind === "host" && e.host === h && (e.port ?? port) === port);
}

/** Is the address `ip` inside a CIDR of the list? */
export function allowedAddress(list: readonly AllowEntry[], ip: string): boolean {
  const a = parseAddress(ip);
  return a !== undefined &&
    list.some((e) => e.kind === "cidr" && inPrefix(a.bytes, e.prefix, e.bits));
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
  if (why === undefined && parseAddress(bare) === undefined) {
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

/**
 * Why a webhook URL may not be called now (at delivery), its name resolved: refusedUrl, then
 * every address the name has must be public or allowed by a CIDR (or the host itself listed).
 */
export async function refusedTarget(
  text: string,
  list: readonly AllowEntry[],
  resolve: Resolver = dnsResolver,
): Promise<string | undefined> {
  const refused = refusedUrl(text, list);
  if (refused !== undefined) return refused;
  const url = new URL(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (allowedHost(list, url.hostname, portOf(url)) || parseAddress(host) !== undefined) {
    return undefined;
  }
  let addresses: readonly string[];
  try {
    addresses = await resolve(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) return `the webhook's host ${host} could not be resolved`;
  for (const ip of addresses) {
    const why = privateAddressReason(ip);
    if (why !== undefined && !allowedAddress(list, ip)) {
      return `the webhook's host ${host} resolves to ${ip}, ${why}, which an admin has not allowed (setting alerts.allowPrivateTargets)`;
    }
  }
  return undefined;
}
