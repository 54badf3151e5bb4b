import assert from "node:assert/strict";
import {
  parseAllowList,
  privateAddressReason,
  refusedTarget,
  refusedUrl,
} from "./private_targets.ts";

const list = (text: string) => {
  const l = parseAllowList(text);
  if (typeof l === "string") throw new Error(l);
  return l;
};

Deno.test("addresses of the server's own network are named, public ones are not", () => {
  const cases: [string, string | undefined][] = [
    ["127.0.0.1", "a loopback address"],
    ["127.9.9.9", "a loopback address"],
    ["::1", "a loopback address"],
    ["169.254.169.254", "the cloud metadata address"],
    ["169.254.1.2", "a link-local address"],
    ["fe80::1", "a link-local address"],
    ["10.1.2.3", "a private address"],
    ["172.16.0.1", "a private address"],
    ["172.31.255.255", "a private address"],
    ["192.168.1.1", "a private address"],
    ["fd12:3456::1", "a private (unique local) address"],
    ["0.0.0.0", "an unspecified address"],
    ["::", "an unspecified address"],
    ["224.0.0.1", "a multicast address"],
    ["ff02::1", "a multicast address"],
    ["::ffff:127.0.0.1", "a loopback address"],
    ["::ffff:a9fe:a9fe", "the cloud metadata address"],
    ["64:ff9b::10.0.0.1", "a private address"],
    ["172.32.0.1", undefined],
    ["8.8.8.8", undefined],
    ["2001:4860:4860::8888", undefined],
    ["hooks.example.com", undefined],
  ];
  for (const [ip, why] of cases) assert.equal(privateAddressReason(ip), why, ip);
});

Deno.test("webhook URLs: refused with the reason, unless the allow list names them", () => {
  const none = list("");
  const refused: [string, RegExp][] = [
    ["http://127.0.0.1:9000/x", /127\.0\.0\.1 is a loopback address/],
    ["http://[::1]/x", /\[::1\] is a loopback address/],
    ["http://169.254.169.254/latest/meta-data/", /the cloud metadata address/],
    ["http://2852039166/", /the cloud metadata address/], // 169.254.169.254 as one number
    ["http://0x7f.1/", /loopback address/],
    ["http://10.0.0.5/", /a private address/],
    ["http://192.168.0.10:8080/", /a private address/],
    ["https://[fd00::5]/", /unique local/],
    ["http://[fe80::1]/", /link-local/],
    ["http://0.0.0.0/", /unspecified/],
    ["http://224.0.0.1/", /multicast/],
    ["http://localhost:8080/", /loopback name/],
    ["http://a.localhost/", /loopback name/],
    ["ftp://hooks.example.com/", /only http and https/],
    ["file:///etc/passwd", /only http and https/],
    ["not a url", /is not a URL/],
  ];
  for (const [url, why] of refused) {
    const r = refusedUrl(url, none);
    assert.ok(r !== undefined, url);
    assert.match(r, why, url);
  }
  assert.equal(refusedUrl("https://hooks.example.com/trawl", none), undefined);
  assert.equal(refusedUrl("http://8.8.8.8/", none), undefined);
  // Allowed: by host and port, by host, by CIDR.
  const allow = list("127.0.0.1:9000, hooks.lan, 10.20.0.0/16, [::1]:8080, fd00::/8");
  assert.equal(refusedUrl("http://127.0.0.1:9000/x", allow), undefined);
  assert.match(refusedUrl("http://127.0.0.1:9001/x", allow)!, /loopback/);
  assert.equal(refusedUrl("http://10.20.3.4/", allow), undefined);
  assert.match(refusedUrl("http://10.21.3.4/", allow)!, /private/);
  assert.equal(refusedUrl("http://[::1]:8080/", allow), undefined);
  assert.equal(refusedUrl("http://[fd00::7]/", allow), undefined);
  assert.equal(refusedUrl("http://localhost:9000/", list("localhost:9000")), undefined);
  assert.match(parseAllowList("10.0.0.0/40") as string, /not a CIDR/);
  assert.match(parseAllowList("http://x/") as string, /neither a host\[:port\] nor a CIDR/);
});

Deno.test("at delivery a name is resolved: one private address refuses it", async () => {
  const dns = (answers: Record<string, string[]>) => (host: string) =>
    Promise.resolve(answers[host] ?? []);
  const resolve = dns({
    "public.test": ["93.184.216.34"],
    "rebound.test": ["93.184.216.34", "169.254.169.254"],
    "inside.test": ["10.20.0.9"],
  });
  const none = list("");
  assert.equal(await refusedTarget("https://public.test/h", none, resolve), undefined);
  assert.match(
    (await refusedTarget("https://rebound.test/h", none, resolve))!,
    /resolves to 169\.254\.169\.254, the cloud metadata address/,
  );
  assert.match((await refusedTarget("https://nowhere.test/", none, resolve))!, /not be resolved/);
  assert.equal(
    await refusedTarget("https://inside.test/", list("10.20.0.0/16"), resolve),
    undefined,
  );
  assert.equal(
    await refusedTarget("https://inside.test/", list("inside.test"), resolve),
    undefined,
  );
  assert.match((await refusedTarget("https://inside.test/", none, resolve))!, /private/);
});
