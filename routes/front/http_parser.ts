/**
 * HTTP/1.1 framing as llhttp (the parser of Node and undici, as WebAssembly: npm `llhttp-wasm`)
 * decides it: where a message's head ends, where the message ends, and what is not HTTP/1.1 at
 * all. The front (routes/guarded_server.ts) feeds it the bytes of one direction of a connection
 * and acts on each step; it never reads header values through it (the wrapper splits a value
 * that arrives in two reads), only positions, the method, the status and errors.
 *
 *   const requests = new HttpParser("request");
 *   const step = requests.execute(bytes); // { kind: "head", at } ... { kind: "complete", at }
 */

import { createParser, METHODS, type Parser } from "llhttp-wasm";

/** What `execute` found in the bytes given to it. */
export type ParseStep =
  /** Every byte taken; the message goes on. */
  | { readonly kind: "more" }
  /** The head ends `at` bytes into the bytes given (requests only). */
  | { readonly kind: "head"; readonly at: number }
  /** The message ends `at` bytes into the bytes given; `status` for responses. */
  | { readonly kind: "complete"; readonly at: number; readonly status: number }
  /** An HTTP/2 connection preface (`PRI * HTTP/2.0`). */
  | { readonly kind: "http2" }
  /** Not HTTP/1.1 as llhttp reads it strictly (smuggling framings, obs-fold, bare LF, ...). */
  | { readonly kind: "error"; readonly reason: string };

// llhttp's error numbers (llhttp.h): a callback's pause, and the pauses llhttp makes itself.
const OK = 0;
const PAUSED = 21;
const PAUSED_UPGRADE = 22;
const PAUSED_H2_UPGRADE = 23;
/** A response callback's answer: this response has no body (it answers a HEAD). */
const SKIP_BODY = 1;

export class HttpParser {
  readonly #parser: Parser;
  /** Requests: the head has been read and the message goes on. */
  #inBody = false;
  #paused = false;
  #status = 0;
  /** Requests: the last head read was a HEAD request's. */
  headRequest = false;
  /** Responses: whether the response now expected answers a HEAD (and so has no body). */
  answersHead = false;

  constructor(readonly type: "request" | "response") {
    // The wrapper looks the type up by name (a number falls back to BOTH, which would take a
    // response from a client for a request).
    this.#parser = createParser(type.toUpperCase() as unknown as number);
    this.#parser.onHeadersComplete = (head) => {
      if (type === "request") {
        this.headRequest = head.method === METHODS.HEAD;
        return PAUSED;
      }
      this.#status = head.statusCode ?? 0;
      return this.answersHead ? SKIP_BODY : OK;
    };
    this.#parser.onMessageComplete = () => PAUSED;
  }

  /**
   * Reads `bytes` up to the next step. Call it again with the bytes after `at` (even none: a
   * message without a body completes on an empty call after its head).
   */
  execute(bytes: Uint8Array): ParseStep {
    if (this.#paused) {
      this.#parser.resume();
      this.#paused = false;
    }
    const code = this.#parser.execute(bytes);
    switch (code) {
      case OK:
        return { kind: "more" };
      case PAUSED: {
        this.#paused = true;
        const at = this.#parser.getErrorPosition();
        // Requests pause twice (the head, then the end); responses at their end only.
        if (this.type === "request" && !this.#inBody) {
          this.#inBody = true;
          return { kind: "head", at };
        }
        this.#inBody = false;
        return { kind: "complete", at, status: this.#status };
      }
      case PAUSED_UPGRADE: {
        // Upgrade or CONNECT, once its message has completed: llhttp stops reading HTTP there.
        // The front serves no upgrade (a 101 from the back end closes the connection), so what
        // follows is read as the next request.
        const at = this.#parser.getErrorPosition();
        this.#parser.reset();
        this.#inBody = false;
        const next = this.execute(bytes.subarray(at));
        return "at" in next ? { ...next, at: at + next.at } : next;
      }
      case PAUSED_H2_UPGRADE:
        return { kind: "http2" };
      default:
        return {
          kind: "error",
          reason: this.#parser.getErrorReason(code) ?? `llhttp error ${code}`,
        };
    }
  }

  /** The peer closed its side: a response read until the end completes now. */
  finish(): ParseStep {
    if (this.#paused) {
      this.#parser.resume();
      this.#paused = false;
    }
    const code = this.#parser.finish();
    if (code === OK || code === PAUSED) return { kind: "complete", at: 0, status: this.#status };
    return { kind: "error", reason: this.#parser.getErrorReason(code) ?? `llhttp error ${code}` };
  }

  /** Frees the parser's WebAssembly memory. */
  close(): void {
    this.#parser.destroy();
  }
}
