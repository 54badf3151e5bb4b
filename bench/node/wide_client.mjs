// deno-lint-ignore-file no-console
// The wide task's answer fetched by Node, as a Node client would: by its fetch (undici), which
// decodes gzip itself (zlib, in C), or with `raw` by node:http, which does not decode (the
// server's part alone: its compressed bytes, counted). Prints one JSON line:
// { ms, result: { rows, mb } } (mb decoded), or with `raw` { ms, result: { wireMb } }.
//   node wide_client.mjs URL TOKEN ENCODING SCRIPT [raw]
import http from "node:http";

const [url, token, encoding, script, raw] = process.argv.slice(2);
const headers = {
  Authorization: `Bearer ${token}`,
  "Content-Type": "text/vnd.engine.script",
  Accept: "application/json",
  "Accept-Encoding": encoding,
};
const started = performance.now();
if (raw === "raw") {
  const wire = await new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`Trawl answered ${res.statusCode}`));
      let bytes = 0;
      res.on("data", (chunk) => bytes += chunk.length);
      res.on("end", () => resolve(bytes));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(script);
  });
  const ms = performance.now() - started;
  console.log(JSON.stringify({ ms, result: { wireMb: Math.round(wire / 1e6) } }));
} else {
  const res = await fetch(url, { method: "POST", headers, body: script });
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
}
