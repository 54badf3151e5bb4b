/**
 * The head of a request as the front hands it to the back end: the client's bytes, with every
 * `Trawl-Client-Address` line the client sent dropped and the front's own added, naming the
 * address the connection came from. The back end (routes/request_log.ts) believes only this
 * header, since only the front reaches the back end's private socket.
 *
 *   forwardedHead(bytes, "203.0.113.7") // "GET / HTTP/1.1\r\nHost: x\r\nTrawl-Client-Address: 203.0.113.7\r\n\r\n"
 */

/** The header the front sets; a client's own is never passed on. */
export const CLIENT_ADDRESS_HEADER = "Trawl-Client-Address";

/** The header's name in lower case, as bytes, to compare a line's name with. */
const NAME = new TextEncoder().encode(CLIENT_ADDRESS_HEADER.toLowerCase());
const LF = 10;
const COLON = 58;
const SPACE = 32;
const TAB = 9;

/**
 * `head` is a whole request head (request line, header lines, the empty line) that llhttp has
 * read strictly: lines end with CRLF and none is folded. It is copied line by line, never
 * decoded: a request's head is rewritten on the way of every request.
 */
export function forwardedHead(head: Uint8Array, clientAddress: string): Uint8Array {
  const added = latin1Bytes(`${CLIENT_ADDRESS_HEADER}: ${clientAddress}\r\n\r\n`);
  const out = new Uint8Array(head.length + added.length);
  let length = 0;
  // The request line and the header lines, each with its CRLF; the blank line's CRLF is the
  // last two bytes, replaced by the added line and a blank line of its own.
  const end = head.length - 2;
  for (let start = 0, line = 0; start < end; line++) {
    const next = head.indexOf(LF, start) + 1;
    const stop = next === 0 ? end : next;
    if (line === 0 || !namesClientAddress(head, start, stop)) {
      out.set(head.subarray(start, stop), length);
      length += stop - start;
    }
    start = stop;
  }
  out.set(added, length);
  return out.subarray(0, length + added.length);
}

/** Whether the header line at `start` (up to `stop`) is a Trawl-Client-Address, in any case. */
function namesClientAddress(head: Uint8Array, start: number, stop: number): boolean {
  if (stop - start <= NAME.length) return false;
  for (let i = 0; i < NAME.length; i++) {
    // ASCII letters to lower case; the name's other bytes ('-') are unchanged by it.
    const b = head[start + i]!;
    if ((b >= 65 && b <= 90 ? b + 32 : b) !== NAME[i]) return false;
  }
  let at = start + NAME.length;
  while (head[at] === SPACE || head[at] === TAB) at++;
  return head[at] === COLON;
}

/** Header text (a name and an address: ASCII) as its bytes. */
function latin1Bytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
