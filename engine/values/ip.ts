/**
 * IP addresses and networks: parsing (v4 fast and allocation-free, v6 with `::` and an embedded
 * v4 tail), RFC 5952 formatting, containment and truncation. IPv4 bits are uint32 numbers, IPv6
 * bits 128-bit bigints (engine/values/values.ts).
 */

import { IpAddr, IpNet } from "./values.ts";

const V6_ALL = (1n << 128n) - 1n;
const V4_MAPPED_PREFIX = 0xffffn << 32n;

/**
 * The uint32 of a dotted IPv4 address in `text[start, end)`, or -1 when it is not one. Each part
 * is 1 to 3 digits up to 255.
 */
export function parseIpv4(text: string, start = 0, end: number = text.length): number {
  let value = 0;
  let part = 0;
  let digitsInPart = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      part = part * 10 + (c - 48);
      if (++digitsInPart > 3 || part > 255) return -1;
    } else if (c === 46) {
      if (digitsInPart === 0 || ++dots > 3) return -1;
      value = value * 256 + part;
      part = 0;
      digitsInPart = 0;
    } else return -1;
  }
  if (dots !== 3 || digitsInPart === 0) return -1;
  return value * 256 + part;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** The 128 bits of an IPv6 address, or null. */
export function parseIpv6Bits(text: string): bigint | null {
  const double = text.indexOf("::");
  if (double >= 0 && text.indexOf("::", double + 1) >= 0) return null;
  const head = double >= 0 ? text.slice(0, double) : text;
  const tail = double >= 0 ? text.slice(double + 2) : "";
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === "" ? [] : tail.split(":");
  const groups: number[] = [];
  const all = double >= 0 ? tailGroups : headGroups;
  if (double >= 0) {
    for (const g of headGroups) {
      const v = parseGroup(g);
      if (v < 0) return null;
      groups.push(v);
    }
  }
  const rest: number[] = [];
  for (let k = 0; k < all.length; k++) {
    const g = all[k]!;
    if (k === all.length - 1 && g.includes(".")) {
      const v4 = parseIpv4(g);
      if (v4 < 0) return null;
      rest.push(Math.floor(v4 / 65536), v4 % 65536);
    } else {
      const v = parseGroup(g);
      if (v < 0) return null;
      rest.push(v);
    }
  }
  if (double >= 0) {
    const missing = 8 - groups.length - rest.length;
    if (missing < 1) return null;
    for (let k = 0; k < missing; k++) groups.push(0);
  }
  groups.push(...rest);
  if (groups.length !== 8) return null;
  let bits = 0n;
  for (const g of groups) bits = (bits << 16n) | BigInt(g);
  return bits;
}

function parseGroup(g: string): number {
  if (g.length === 0 || g.length > 4) return -1;
  let v = 0;
  for (let i = 0; i < g.length; i++) {
    const h = hexValue(g.charCodeAt(i));
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

/** An IPv4 or IPv6 address (`10.0.0.1`, `2001:db8::1`, `::ffff:1.2.3.4`), or null. */
export function parseIp(text: string): IpAddr | null {
  const s = text.trim();
  if (s.includes(":")) {
    // A zone index (`fe80::1%eth0`) names an interface, not part of the address.
    const pct = s.indexOf("%");
    const bits = parseIpv6Bits(pct >= 0 ? s.slice(0, pct) : s);
    return bits === null ? null : new IpAddr(6, bits);
  }
  const v4 = parseIpv4(s);
  return v4 < 0 ? null : new IpAddr(4, v4);
}

/** `ip` with all but its first `bits` bits cleared (bits clamped to the address size). */
export function ipTrunc(ip: IpAddr, bits: number): IpAddr {
  if (ip.version === 4) {
    const b = Math.max(0, Math.min(32, Math.floor(bits)));
    const mask = b === 0 ? 0 : (0xffffffff << (32 - b)) >>> 0;
    return new IpAddr(4, ((ip.bits as number) & mask) >>> 0);
  }
  const b = BigInt(Math.max(0, Math.min(128, Math.floor(bits))));
  const mask = (V6_ALL << (128n - b)) & V6_ALL;
  return new IpAddr(6, (ip.bits as bigint) & mask);
}

/** A network `10.0.0.0/8`, `2001:db8::/32` (host bits cleared); an address alone is a host net. */
export function parseNet(text: string): IpNet | null {
  const s = text.trim();
  const slash = s.indexOf("/");
  const ip = parseIp(slash >= 0 ? s.slice(0, slash) : s);
  if (!ip) return null;
  const max = ip.version === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = s.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p)) return null;
    prefix = Number(p);
    if (prefix > max) return null;
  }
  return new IpNet(ipTrunc(ip, prefix), prefix);
}

/** Dotted IPv4, or IPv6 as RFC 5952 says: lower case, no leading zeros, longest zero run `::`. */
export function formatIp(ip: IpAddr): string {
  if (ip.version === 4) {
    const b = ip.bits as number;
    return `${b >>> 24}.${(b >>> 16) & 255}.${(b >>> 8) & 255}.${b & 255}`;
  }
  const bits = ip.bits as bigint;
  if (bits >> 32n === 0xffffn) {
    return "::ffff:" + formatIp(new IpAddr(4, Number(bits & 0xffffffffn)));
  }
  const groups: number[] = [];
  for (let k = 7; k >= 0; k--) groups.push(Number((bits >> BigInt(k * 16)) & 0xffffn));
  let bestStart = -1, bestLen = 0;
  for (let k = 0; k < 8;) {
    if (groups[k] !== 0) {
      k++;
      continue;
    }
    let j = k;
    while (j < 8 && groups[j] === 0) j++;
    if (j - k > bestLen) {
      bestStart = k;
      bestLen = j - k;
    }
    k = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(":");
  return hex.slice(0, bestStart).join(":") + "::" + hex.slice(bestStart + bestLen).join(":");
}

export function formatNet(net: IpNet): string {
  return `${formatIp(net.address)}/${net.prefix}`;
}

/**
 * True when `ip` lies in `net`. An IPv4-mapped IPv6 address (`::ffff:10.1.2.3`) counts as its
 * IPv4 address against an IPv4 network.
 */
export function netContains(net: IpNet, ip: IpAddr): boolean {
  let addr = ip;
  if (net.address.version === 4 && ip.version === 6) {
    const bits = ip.bits as bigint;
    if ((bits >> 32n) << 32n !== V4_MAPPED_PREFIX) return false;
    addr = new IpAddr(4, Number(bits & 0xffffffffn));
  } else if (net.address.version !== ip.version) return false;
  const truncated = ipTrunc(addr, net.prefix);
  return truncated.bits === net.address.bits;
}
