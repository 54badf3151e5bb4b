/**
 * Result format negotiation: `acceptContentType` (wins) or `Accept`, and the `opt.*`
 * customisation parameters. Pure: it returns a problem instead of throwing, so that routes turn
 * it into an ApiError in one place and tests need no HTTP.
 */

import { checkTimePattern, isValidZone } from "../engine/time.ts";

export const MEDIA_TYPES = [
  "application/json",
  "application/json-seq",
  "application/x-ndjson",
  "application/csv",
] as const;

export type MediaType = typeof MEDIA_TYPES[number];

export interface FormatOptions {
  /** IANA zone for TIMESTAMP values; undefined means the user's zone, else UTC. */
  readonly timeZone?: string;
  readonly timestampFormat?: string;
  readonly omitHeader: boolean;
}

export interface ResultFormat {
  readonly mediaType: MediaType;
  readonly options: FormatOptions;
}

export type FormatChoice =
  | {
    readonly ok: true;
    readonly format: ResultFormat;
    /** The client named a format or an option: on POST /queries this fixes the format. */
    readonly explicit: boolean;
  }
  | {
    readonly ok: false;
    readonly status: 400 | 406;
    readonly code: "BAD_PARAMETER" | "NOT_ACCEPTABLE";
    readonly message: string;
  };

const OPT_NAMES = ["opt.timezone", "opt.timestampFormat", "opt.omitHeader"] as const;

/** The format a request asks for: `negotiateFormat(url.searchParams, req.header("Accept"))`. */
export function negotiateFormat(
  params: URLSearchParams,
  accept: string | null | undefined,
): FormatChoice {
  const options = parseOptions(params);
  if (!options.ok) return options;
  const param = params.get("acceptContentType");
  let mediaType: MediaType | undefined;
  let explicit = options.explicit;
  if (param !== null) {
    explicit = true;
    const wanted = param.split(";")[0].trim().toLowerCase();
    mediaType = MEDIA_TYPES.find((m) => m === wanted);
    if (!mediaType) return notAcceptable(`acceptContentType '${param}'`);
  } else if (accept && accept.trim() !== "") {
    const chosen = chooseFromAccept(accept);
    if (chosen === null) return notAcceptable(`Accept '${accept}'`);
    mediaType = chosen.mediaType;
    explicit ||= !chosen.wildcardOnly;
  } else mediaType = "application/json";
  return { ok: true, format: { mediaType, options: options.value }, explicit };
}

/** The `opt.*` names this API knows; any other `opt.*` is refused. */
export function isOptionName(name: string): boolean {
  return (OPT_NAMES as readonly string[]).includes(name);
}

function notAcceptable(what: string): FormatChoice {
  return {
    ok: false,
    status: 406,
    code: "NOT_ACCEPTABLE",
    message: `${what} names no offered result format; offered are ${MEDIA_TYPES.join(", ")}`,
  };
}

function badParameter(message: string): FormatChoice & { ok: false } {
  return { ok: false, status: 400, code: "BAD_PARAMETER", message };
}

function parseOptions(
  params: URLSearchParams,
): { ok: true; value: FormatOptions; explicit: boolean } | (FormatChoice & { ok: false }) {
  let explicit = false;
  for (const name of params.keys()) {
    if (name.startsWith("opt.")) {
      if (!isOptionName(name)) {
        return badParameter(
          `unknown parameter '${name}'; the options are ${OPT_NAMES.join(", ")}`,
        );
      }
      if (params.getAll(name).length > 1) return badParameter(`parameter '${name}' given twice`);
      explicit = true;
    }
  }
  const timeZone = params.get("opt.timezone") ?? undefined;
  if (timeZone !== undefined && !isValidZone(timeZone)) {
    return badParameter(`opt.timezone '${timeZone}' is not an IANA time zone`);
  }
  const timestampFormat = params.get("opt.timestampFormat") ?? undefined;
  if (timestampFormat !== undefined) {
    const problem = timestampFormat === ""
      ? "the pattern is empty"
      : timestampFormat.length > 100
      ? "the pattern is longer than 100 characters"
      : checkTimePattern(timestampFormat);
    if (problem) return badParameter(`opt.timestampFormat '${timestampFormat}': ${problem}`);
  }
  const omit = params.get("opt.omitHeader");
  if (omit !== null && omit !== "true" && omit !== "false") {
    return badParameter(`opt.omitHeader must be 'true' or 'false', found '${omit}'`);
  }
  return { ok: true, value: { timeZone, timestampFormat, omitHeader: omit === "true" }, explicit };
}

interface AcceptChoice {
  readonly mediaType: MediaType;
  /** Only `*` ranges matched: the client has no preference. */
  readonly wildcardOnly: boolean;
}

/** The offered type with the highest q in an Accept header; exact ranges beat wildcards. */
function chooseFromAccept(accept: string): AcceptChoice | null {
  let best: { q: number; specificity: number; type: MediaType; wildcard: boolean } | null = null;
  for (const part of accept.split(",")) {
    const [range, ...paramParts] = part.split(";").map((s) => s.trim());
    if (range === "") continue;
    let q = 1;
    for (const p of paramParts) {
      const [k, v] = p.split("=").map((s) => s.trim());
      if (k.toLowerCase() === "q") {
        const n = Number(v);
        q = Number.isFinite(n) ? n : 0;
      }
    }
    if (q <= 0) continue;
    const lower = range.toLowerCase();
    const matched: [MediaType, number, boolean] | undefined = lower === "*/*" ||
        lower === "application/*"
      ? ["application/json", 0, true]
      : MEDIA_TYPES.includes(lower as MediaType)
      ? [lower as MediaType, 1, false]
      : undefined;
    if (!matched) continue;
    const [type, specificity, wildcard] = matched;
    if (
      !best || q > best.q || (q === best.q && specificity > best.specificity)
    ) best = { q, specificity, type, wildcard };
  }
  return best ? { mediaType: best.type, wildcardOnly: best.wildcard } : null;
}
