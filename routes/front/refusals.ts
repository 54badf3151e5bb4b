/**
 * What the front itself answers, without the back end: HTTP/1.1 errors in the API's JSON form
 * (`{"code", "message"}`, `Connection: close`), and to an HTTP/2 client (prior knowledge) the
 * HTTP/2 way of saying no: the server's preface (an empty SETTINGS frame) and a GOAWAY with
 * HTTP_1_1_REQUIRED, never HTTP/1.1 text in an HTTP/2 stream.
 */

const REFUSALS = {
  400: ["Bad Request", "BAD_REQUEST"],
  408: ["Request Timeout", "REQUEST_TIMEOUT"],
  431: ["Request Header Fields Too Large", "HEADERS_TOO_LARGE"],
  503: ["Service Unavailable", "SERVICE_UNAVAILABLE"],
} as const;

export type RefusalStatus = keyof typeof REFUSALS;

/** A whole HTTP/1.1 answer that closes the connection. */
export function refusal(status: RefusalStatus, message: string): Uint8Array {
  const [reason, code] = REFUSALS[status];
  const body = new TextEncoder().encode(JSON.stringify({ code, message }));
  const head = `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=UTF-8\r\n` +
    `Content-Length: ${body.length}\r\nConnection: close\r\n` +
    (status === 503 ? "Retry-After: 1\r\n" : "") + "\r\n";
  const bytes = new TextEncoder().encode(head);
  const out = new Uint8Array(bytes.length + body.length);
  out.set(bytes);
  out.set(body, bytes.length);
  return out;
}

/** The start of the HTTP/2 connection preface, as far as it tells HTTP/2 from HTTP/1.1. */
export const HTTP2_PREFACE_START = "PRI * HTTP/2.0\r\n";

/**
 * SETTINGS (length 0, type 4, stream 0), then GOAWAY (length 8, type 7, stream 0, last stream
 * 0, error 0xd HTTP_1_1_REQUIRED): RFC 9113, sections 3.4, 6.5, 6.8 and 7.
 */
export const HTTP2_REFUSAL: Uint8Array = new Uint8Array([
  ...[0, 0, 0, /* SETTINGS */ 4, 0, ...[0, 0, 0, 0]],
  ...[0, 0, 8, /* GOAWAY */ 7, 0, ...[0, 0, 0, 0], ...[0, 0, 0, 0], ...[0, 0, 0, 0x0d]],
]);

/** Whether `start` (a request's first bytes) is, so far, an HTTP/2 preface. */
export function looksLikeHttp2(start: string): boolean {
  const n = Math.min(start.length, HTTP2_PREFACE_START.length);
  return n >= 3 && start.slice(0, n) === HTTP2_PREFACE_START.slice(0, n);
}
