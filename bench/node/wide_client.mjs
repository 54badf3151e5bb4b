// The wide task's answer fetched by Node's own fetch (undici), as a Node client would: it decodes
// gzip itself (zlib, in C). Prints one JSON line: { ms, result: { rows, mb } } (mb decoded).
//   node wide_client.mjs URL TOKEN ENCODING SCRIPT
const [url, token, encoding, script] = process.argv.slice(2);
const started = performance.now();
const res = await fetch(url, {
  method: "POST",
  headers: {
    Authorization: `Bearer ${token}`,
    "Content-Type": "text/vnd.engine.script",
    Accept: "application/json",
    "Accept-Encoding": encoding,
  },
  body: script,
});
if (!res.ok) throw new Error(`Trawl answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
let rows = 0;
let bytes = 0;
for await (const chunk of res.body) {
  bytes += chunk.length;
  // One object a row (no value of this task holds a brace).
  for (let i = chunk.indexOf(0x7b); i >= 0; i = chunk.indexOf(0x7b, i + 1)) rows++;
}
const ms = performance.now() - started;
console.log(JSON.stringify({ ms, result: { rows, mb: Math.round(bytes / 1e6) } }));
