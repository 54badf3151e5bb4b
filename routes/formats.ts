/**
 * Result format negotiation: `acceptContentType` (wins) or `Accept`, and the `opt.*`
 * customisation parameters. Pure: it returns a problem instead of throwing, so that routes turn
 * it into an ApiError in one place and tests need no HTTP.
 */

import {
  checkTimePattern,
  compileRowTextWriter,
  headerText,
  isValidZone,
  type RenderOptions,
  type Row,
  type RowTextFormat,
  type Schema,
} from "../engine/mod.ts";
import { arrowBatchWriter, type BatchWriter } from "./arrow.ts";

/** The serialiser of one row, given the result's columns and how values are rendered. */
export type RowWriterFactory = (
  columns: readonly string[],
  render: RenderOptions,
) => (row: Row) => string;

/**
 * One result format: everything the negotiation and the body writer know of it. A format is
 * one entry of `FORMATS`; nothing else names a media type. A format either has rows as JSON
 * objects, or names the text format of engine/render_bytes.ts its rows (and header) are written
 * in, or writes batches: a text format cannot fall back to JSON rows by omission.
 */
export type FormatSpec =
  & FormatFraming
  & (
    | { readonly jsonRows: true }
    | {
      readonly jsonRows: false;
      /** Rows and header as engine/render/render_bytes.ts writes this text format (left out with `opt.omitHeader=true`). */
      readonly text: RowTextFormat;
      readonly batches?: undefined;
    }
    | {
      /** A binary format: written a batch of rows at a time, from the result's schema. */
      readonly jsonRows: false;
      readonly batches: BatchWriterFactory;
      readonly text?: undefined;
    }
  );

/** The writer of a binary format, given the result's schema and how values are rendered. */
export type BatchWriterFactory = (schema: Schema, render: RenderOptions) => BatchWriter;

interface FormatFraming {
  /** Other names a client may ask for it by (in `Accept` or `acceptContentType`). */
  readonly aliases: readonly string[];
  /** The `Content-Type` of an answer, with its charset. */
  readonly contentType: string;
  /** Text after the header and before the first row. */
  readonly start: string;
  /** Put before each row but the first. */
  readonly separator: string;
  /** Put before each row. */
  readonly before: string;
  /** Put after each row. */
  readonly after: string;
  /** Text after the last row (the footer). */
  readonly end: string;
}

/** How a format writes a row: its own writer, or one JSON object per row. */
export function rowWriterOf(spec: FormatSpec): RowWriterFactory {
  const text = rowTextOf(spec);
  if (text) return (columns, render) => compileRowTextWriter(text, columns, render);
  throw new Error("a binary format is written in batches, not rows (formatSpec(...).batches)");
}

/** How a binary format writes its batches, or undefined for a text format. */
export function batchWriterOf(spec: FormatSpec): BatchWriterFactory | undefined {
  return spec.jsonRows ? undefined : spec.batches;
}

/**
 * The text format a format's rows are written in (engine/render/render_bytes.ts), or undefined for a
 * binary format.
 */
export function rowTextOf(spec: FormatSpec): RowTextFormat | undefined {
  return spec.jsonRows ? "json" : spec.text;
}

/** The header of a format for the columns ("" when it has none). */
export function headerOf(spec: FormatSpec, columns: readonly string[]): string {
  const text = rowTextOf(spec);
  return text ? headerText(text, columns) : "";
}

/** Every result format offered, the first being the default (API.md, "Result formats"). */
export const FORMATS = {
  "application/json": {
    aliases: [],
    contentType: "application/json; charset=UTF-8",
    jsonRows: true,
    start: "[",
    separator: ",",
    before: "",
    after: "",
    end: "]",
  },
  "application/json-seq": {
    aliases: [],
    contentType: "application/json-seq; charset=UTF-8",
    jsonRows: true,
    start: "",
    separator: "",
    before: "\x1e",
    after: "\n",
    end: "",
  },
  "application/x-ndjson": {
    aliases: [],
    contentType: "application/x-ndjson; charset=UTF-8",
    jsonRows: true,
    start: "",
    separator: "",
    before: "",
    after: "\n",
    end: "",
  },
  "application/csv": {
    aliases: [],
    contentType: "application/csv; charset=UTF-8",
    jsonRows: false,
    text: "csv",
    start: "",
    separator: "",
    before: "",
    after: "\n",
    end: "",
  },
  "text/tab-separated-values": {
    aliases: ["application/tsv"],
    contentType: "text/tab-separated-values; charset=UTF-8",
    jsonRows: false,
    text: "tsv",
    start: "",
    separator: "",
    before: "",
    after: "\n",
    end: "",
  },
  "application/vnd.apache.arrow.stream": {
    aliases: [],
    contentType: "application/vnd.apache.arrow.stream",
    jsonRows: false,
    batches: arrowBatchWriter,
    start: "",
    separator: "",
    before: "",
    after: "",
    end: "",
  },
} satisfies Record<string, FormatSpec>;

export type MediaType = keyof typeof FORMATS;

/** The format of a media type (an entry of `FORMATS`). */
export function formatSpec(mediaType: MediaType): FormatSpec {
  return (FORMATS as Record<string, FormatSpec>)[mediaType]!;
}

/** The offered media types, in the order of `FORMATS` (read per call: the table is the truth). */
function mediaTypes(): MediaType[] {
  return Object.keys(FORMATS) as MediaType[];
}

/** The offered format a name (a media type or an alias, any case) stands for, or undefined. */
export function mediaTypeNamed(name: string): MediaType | undefined {
  const wanted = name.trim().toLowerCase();
  return mediaTypes().find((m) =>
    m === wanted || formatSpec(m).aliases.some((a) => a.toLowerCase() === wanted)
  );
}

export interface FormatOptions {
  /** IANA zone for TIMESTAMP values; undefined means the query's zone (the user's, else `server.timeZone`). */
  readonly timeZone?: string | undefined;
  readonly timestampFormat?: string | undefined;
  readonly omitHeader: boolean;
  /** `opt.failOnWarning=true`: a synchronous answer with a WARN or ERROR warning is a 409. */
  readonly failOnWarning?: boolean;
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

const OPT_NAMES = [
  "opt.timezone",
  "opt.timestampFormat",
  "opt.timestampNanoFormat",
  "opt.omitHeader",
  "opt.failOnWarning",
] as const;

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
    mediaType = mediaTypeNamed(param.split(";")[0]!);
    if (!mediaType) return notAcceptable(`acceptContentType '${param}'`);
  } else if (accept && accept.trim() !== "") {
    const chosen = chooseFromAccept(accept);
    if (chosen === null) return notAcceptable(`Accept '${accept}'`);
    mediaType = chosen.mediaType;
    explicit ||= !chosen.wildcardOnly;
  } else mediaType = mediaTypes()[0]!;
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
    message: `${what} names no offered result format; offered are ${mediaTypes().join(", ")}`,
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
      // Not a rendering option: it does not fix the format of an asynchronous query.
      if (name !== "opt.failOnWarning") explicit = true;
    }
  }
  const timeZone = params.get("opt.timezone") ?? undefined;
  if (timeZone !== undefined && !isValidZone(timeZone)) {
    return badParameter(`opt.timezone '${timeZone}' is not an IANA time zone`);
  }
  if (params.has("opt.timestampFormat") && params.has("opt.timestampNanoFormat")) {
    return badParameter(
      "give opt.timestampFormat or its synonym opt.timestampNanoFormat, not both",
    );
  }
  // SpectX's clients send opt.timestampNanoFormat; timestamps here have millisecond precision.
  const timestampFormat = params.get("opt.timestampFormat") ??
    params.get("opt.timestampNanoFormat") ?? undefined;
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
  const failOnWarning = params.get("opt.failOnWarning");
  if (failOnWarning !== null && failOnWarning !== "true" && failOnWarning !== "false") {
    return badParameter(`opt.failOnWarning must be 'true' or 'false', found '${failOnWarning}'`);
  }
  return {
    ok: true,
    value: {
      timeZone,
      timestampFormat,
      omitHeader: omit === "true",
      ...(failOnWarning === "true" ? { failOnWarning: true } : {}),
    },
    explicit,
  };
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
      if (k!.toLowerCase() === "q") {
        const n = Number(v);
        q = Number.isFinite(n) ? n : 0;
      }
    }
    if (q <= 0) continue;
    const named = mediaTypeNamed(range!);
    const wildcardType = wildcardMatch(range!);
    const matched: [MediaType, number, boolean] | undefined = named
      ? [named, 1, false]
      : wildcardType
      ? [wildcardType, 0, true]
      : undefined;
    if (!matched) continue;
    const [type, specificity, wildcard] = matched;
    if (
      !best || q > best.q || (q === best.q && specificity > best.specificity)
    ) best = { q, specificity, type, wildcard };
  }
  return best ? { mediaType: best.type, wildcardOnly: best.wildcard } : null;
}

// The first offered type a wildcard range (`*/*`, `application/*`) covers, or undefined.
function wildcardMatch(range: string): MediaType | undefined {
  const lower = range.toLowerCase();
  if (lower === "*/*") return mediaTypes()[0];
  if (!lower.endsWith("/*")) return undefined;
  const prefix = lower.slice(0, -1);
  return mediaTypes().find((m) => m.startsWith(prefix));
}
