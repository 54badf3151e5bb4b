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

const LOWER = CLIENT_ADDRESS_HEADER.toLowerCase();
// Header bytes are octets: latin1 maps each to one code unit and back unchanged.
const latin1 = new TextDecoder("latin1");

/**
 * `head` is a whole request head (request line, header lines, the empty line) that llhttp has
 * read strictly: lines end with CRLF and none is folded.
 */
export function forwardedHead(head: Uint8Array, clientAddress: string): Uint8Array {
  const lines = latin1.decode(head).split("\r\n");
  // The request line, the header lines, then two empty strings (the blank line's CRLF).
  const kept = lines.slice(0, -2).filter((line, i) =>
    i === 0 || line.slice(0, line.indexOf(":")).trim().toLowerCase() !== LOWER
  );
  kept.push(`${CLIENT_ADDRESS_HEADER}: ${clientAddress}`, "", "");
  const text = kept.join("\r\n");
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
