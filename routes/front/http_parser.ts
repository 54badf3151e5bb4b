/**
 * HTTP/1.1 framing as llhttp (the parser of Node and undici, as WebAssembly: routes/front/
 * llhttp_wasm.ts) decides it: where a message's head ends, where the message ends, and what is
 * not HTTP/1.1 at all. The front (routes/guarded_server.ts) feeds it the bytes of one direction
 * of a connection and acts on each step; it reads nothing of a message through it but positions,
 * the method, the status and errors, so the bindings here are small: no callback for the URL,
 * the status text or the headers, and the bytes are copied into one buffer of the module's
 * memory that every parser shares (execute is synchronous), never a fresh allocation.
 *
 *   const requests = new HttpParser("request");
 *   const step = requests.execute(bytes); // { kind: "head", at } ... { kind: "complete", at }
 */

import { LLHTTP_WASM_BASE64 } from "./llhttp_wasm.ts";

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

const latin1 = new TextDecoder("latin1");

// llhttp's error numbers (llhttp.h): a callback's pause, and the pauses llhttp makes itself.
const OK = 0;
const PAUSED = 21;
const PAUSED_UPGRADE = 22;
const PAUSED_H2_UPGRADE = 23;
/** A response callback's answer: this response has no body (it answers a HEAD). */
const SKIP_BODY = 1;
/** llhttp's parser types and the one method it is asked about (llhttp.h). */
const REQUEST = 1;
const RESPONSE = 2;
const HEAD = 2;

/** The functions of llhttp's WebAssembly build the front uses. */
interface Llhttp {
  readonly memory: WebAssembly.Memory;
  _initialize(): void;
  malloc(size: number): number;
  free(pointer: number): void;
  llhttp_alloc(type: number): number;
  llhttp_free(parser: number): void;
  llhttp_execute(parser: number, data: number, length: number): number;
  llhttp_finish(parser: number): number;
  llhttp_resume(parser: number): void;
  llhttp_reset(parser: number): void;
  llhttp_get_error_pos(parser: number): number;
  llhttp_get_error_reason(parser: number): number;
  llhttp_get_method(parser: number): number;
  llhttp_get_status_code(parser: number): number;
}

/** The module, instantiated on the first parser; its callbacks find their parser by address. */
interface Module {
  readonly llhttp: Llhttp;
  readonly parsers: Map<number, HttpParser>;
  /** The input buffer in the module's memory, and its size. */
  input: number;
  inputSize: number;
}
let loaded: Module | undefined;

function module(): Module {
  if (loaded) return loaded;
  const parsers = new Map<number, HttpParser>();
  const none = () => 0;
  const instance = new WebAssembly.Instance(
    new WebAssembly.Module(Uint8Array.fromBase64(LLHTTP_WASM_BASE64)),
    {
      env: {
        wasm_on_message_begin: none,
        wasm_on_url: none,
        wasm_on_status: none,
        wasm_on_header_field: none,
        wasm_on_header_value: none,
        wasm_on_body: none,
        wasm_on_headers_complete: (parser: number) => parsers.get(parser)?.headersComplete() ?? OK,
        wasm_on_message_complete: () => PAUSED,
      },
    },
  );
  const llhttp = instance.exports as unknown as Llhttp;
  llhttp._initialize();
  loaded = { llhttp, parsers, input: 0, inputSize: 0 };
  return loaded;
}

/** Copies `bytes` into the module's input buffer (grown when too small); returns its address. */
function input(m: Module, bytes: Uint8Array): number {
  if (bytes.length > m.inputSize) {
    if (m.inputSize > 0) m.llhttp.free(m.input);
    m.inputSize = Math.max(bytes.length, 64 * 1024);
    m.input = m.llhttp.malloc(m.inputSize);
  }
  // A view made after malloc: growing the memory detaches the earlier ones.
  new Uint8Array(m.llhttp.memory.buffer, m.input, bytes.length).set(bytes);
  return m.input;
}

export class HttpParser {
  readonly #module = module();
  readonly #parser: number;
  /** Requests: the head has been read and the message goes on. */
  #inBody = false;
  #paused = false;
  #status = 0;
  /** Where the bytes of the last `execute` began in the module's memory. */
  #input = 0;
  /** Requests: the last head read was a HEAD request's. */
  headRequest = false;
  /** Responses: whether the response now expected answers a HEAD (and so has no body). */
  answersHead = false;

  constructor(readonly type: "request" | "response") {
    this.#parser = this.#module.llhttp.llhttp_alloc(type === "request" ? REQUEST : RESPONSE);
    this.#module.parsers.set(this.#parser, this);
  }

  /** llhttp's callback at the end of a head: a request pauses there; a response goes on. */
  headersComplete(): number {
    const { llhttp } = this.#module;
    if (this.type === "request") {
      this.headRequest = llhttp.llhttp_get_method(this.#parser) === HEAD;
      return PAUSED;
    }
    this.#status = llhttp.llhttp_get_status_code(this.#parser);
    return this.answersHead ? SKIP_BODY : OK;
  }

  /**
   * Reads `bytes` up to the next step. Call it again with the bytes after `at` (even none: a
   * message without a body completes on an empty call after its head).
   */
  execute(bytes: Uint8Array): ParseStep {
    const { llhttp } = this.#module;
    if (this.#paused) {
      llhttp.llhttp_resume(this.#parser);
      this.#paused = false;
    }
    this.#input = input(this.#module, bytes);
    const code = llhttp.llhttp_execute(this.#parser, this.#input, bytes.length);
    switch (code) {
      case OK:
        return { kind: "more" };
      case PAUSED: {
        this.#paused = true;
        const at = llhttp.llhttp_get_error_pos(this.#parser) - this.#input;
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
        const at = llhttp.llhttp_get_error_pos(this.#parser) - this.#input;
        llhttp.llhttp_reset(this.#parser);
        this.#inBody = false;
        const next = this.execute(bytes.subarray(at));
        return "at" in next ? { ...next, at: at + next.at } : next;
      }
      case PAUSED_H2_UPGRADE:
        return { kind: "http2" };
      default:
        return { kind: "error", reason: this.#errorReason(code) };
    }
  }

  /** The peer closed its side: a response read until the end completes now. */
  finish(): ParseStep {
    const { llhttp } = this.#module;
    if (this.#paused) {
      llhttp.llhttp_resume(this.#parser);
      this.#paused = false;
    }
    const code = llhttp.llhttp_finish(this.#parser);
    if (code === OK || code === PAUSED) return { kind: "complete", at: 0, status: this.#status };
    return { kind: "error", reason: this.#errorReason(code) };
  }

  /** Frees the parser's WebAssembly memory. */
  close(): void {
    if (!this.#module.parsers.delete(this.#parser)) return;
    this.#module.llhttp.llhttp_free(this.#parser);
  }

  /** llhttp's reason for an error: a C string in the module's memory. */
  #errorReason(code: number): string {
    const { llhttp } = this.#module;
    const at = llhttp.llhttp_get_error_reason(this.#parser);
    const memory = new Uint8Array(llhttp.memory.buffer);
    const end = at === 0 ? 0 : memory.indexOf(0, at);
    return end > at ? latin1.decode(memory.subarray(at, end)) : `llhttp error ${code}`;
  }
}
