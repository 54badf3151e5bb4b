/**
 * Literals of a declared type given as text: view arguments from query strings (`ip=10.0.0.1`,
 * `since=2024-01-01T00:00:00Z`, `n=5`, `flag=true`, `d=15 min`). Strings are taken as they are.
 */

import { parseInterval } from "./interval.ts";
import { parseIp, parseNet } from "./ip.ts";
import { parseTimestamp } from "./time_parse.ts";
import { type Type, typeToString } from "./types.ts";
import { Interval, Timestamp, type Value } from "./values.ts";

export type LiteralResult = { ok: true; value: Value } | { ok: false; message: string };

const INTEGER_TEXT = /^[+-]?\d+$/;
const DOUBLE_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function fail(text: string, type: Type, hint = ""): LiteralResult {
  return {
    ok: false,
    message: `'${text}' is not a literal of type ${typeToString(type)}${hint}`,
  };
}

/** Parses `text` as a literal of `type`; timestamps without an offset are local to `zone`. */
export function parseLiteralOfType(text: string, type: Type, zone: string): LiteralResult {
  const t = text.trim();
  switch (type.kind) {
    case "STRING":
    case "ANY":
      return { ok: true, value: text };
    case "NULL":
      return t === "null" ? { ok: true, value: null } : fail(text, type);
    case "BOOLEAN": {
      const lower = t.toLowerCase();
      if (lower === "true") return { ok: true, value: true };
      if (lower === "false") return { ok: true, value: false };
      return fail(text, type, " (expected true or false)");
    }
    case "INTEGER":
    case "LONG": {
      const body = t.endsWith("L") && type.kind === "LONG" ? t.slice(0, -1) : t;
      if (!INTEGER_TEXT.test(body)) return fail(text, type, " (expected a whole number)");
      const n = Number(body);
      if (type.kind === "INTEGER" && (n < -2147483648 || n > 2147483647)) {
        return fail(text, type, " (out of the 32-bit range)");
      }
      if (!Number.isSafeInteger(n)) return fail(text, type, " (out of the exact range)");
      return { ok: true, value: n };
    }
    case "DOUBLE":
      if (!DOUBLE_TEXT.test(t)) return fail(text, type, " (expected a number)");
      return { ok: true, value: Number(t) };
    case "TIMESTAMP": {
      const ms = parseTimestamp(t, zone);
      return ms === null
        ? fail(text, type, " (expected e.g. 2024-05-01T13:00:00Z or 2024-05-01 13:00:00)")
        : { ok: true, value: new Timestamp(ms) };
    }
    case "INTERVAL": {
      const r = parseInterval(t);
      return r.ok
        ? { ok: true, value: new Interval(r.millis) }
        : fail(text, type, `: ${r.message}`);
    }
    case "IPADDR": {
      const ip = parseIp(t);
      return ip
        ? { ok: true, value: ip }
        : fail(text, type, " (expected e.g. 10.0.0.1 or 2001:db8::1)");
    }
    case "IPNET": {
      const net = parseNet(t);
      return net ? { ok: true, value: net } : fail(text, type, " (expected e.g. 10.0.0.0/8)");
    }
    case "ARRAY":
    case "TUPLE": {
      let json: unknown;
      try {
        json = JSON.parse(t);
      } catch {
        return fail(text, type, " (expected JSON)");
      }
      return jsonOfType(json, type, zone, text);
    }
  }
}

function jsonOfType(json: unknown, type: Type, zone: string, text: string): LiteralResult {
  if (json === null) return { ok: true, value: null };
  if (type.kind === "ARRAY") {
    if (!Array.isArray(json)) return fail(text, type);
    const out: Value[] = [];
    for (const e of json) {
      const r = jsonOfType(e, type.element, zone, text);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return { ok: true, value: out };
  }
  if (type.kind === "TUPLE") {
    if (typeof json !== "object" || Array.isArray(json)) return fail(text, type);
    const out: Record<string, Value> = {};
    const obj = json as Record<string, unknown>;
    for (const f of type.fields) {
      const r = jsonOfType(obj[f.name] ?? null, f.type, zone, text);
      if (!r.ok) return r;
      out[f.name] = r.value;
    }
    return { ok: true, value: out };
  }
  if (typeof json === "string") return parseLiteralOfType(json, type, zone);
  if (typeof json === "number" || typeof json === "boolean") {
    return parseLiteralOfType(String(json), type, zone);
  }
  return fail(text, type);
}
