import assert from "node:assert/strict";
import { formatIp, formatNet, ipTrunc, netContains, parseIp, parseIpv4, parseNet } from "./ip.ts";
import { IpAddr } from "./values.ts";

Deno.test("parseIpv4() reads dotted quads inside a larger text without allocating", () => {
  assert.equal(parseIpv4("10.0.0.1"), 0x0a000001);
  assert.equal(parseIpv4("255.255.255.255"), 0xffffffff);
  assert.equal(parseIpv4("x 192.168.1.20 y", 2, 14), 0xc0a80114);
  for (
    const bad of [
      "256.0.0.1",
      "1.2.3",
      "1.2.3.4.5",
      "1..2.3",
      "1.2.3.",
      "a.b.c.d",
      "",
      "1234.1.1.1",
    ]
  ) {
    assert.equal(parseIpv4(bad), -1, bad);
  }
});

Deno.test("parseIp() and formatIp() round-trip v4 and v6 in RFC 5952 form", () => {
  const cases: [string, string | null][] = [
    ["10.0.0.1", "10.0.0.1"],
    ["::", "::"],
    ["::1", "::1"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
    ["fe80::1%eth0", "fe80::1"],
    ["::ffff:1.2.3.4", "::ffff:1.2.3.4"],
    ["1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"],
    ["1::2:3", "1::2:3"],
    ["1:0:0:2:0:0:0:3", "1:0:0:2::3"],
    ["1::2::3", null],
    ["1:2:3:4:5:6:7:8:9", null],
    ["12345::", null],
    ["g::1", null],
    ["not an ip", null],
  ];
  for (const [text, want] of cases) {
    const ip = parseIp(text);
    assert.equal(ip === null ? null : formatIp(ip), want, text);
  }
  assert.equal(parseIp("::1")!.version, 6);
  assert.equal(parseIp("::1")!.bits, 1n);
});

Deno.test("parseNet() clears host bits and refuses bad prefixes", () => {
  assert.equal(formatNet(parseNet("10.1.2.3/8")!), "10.0.0.0/8");
  assert.equal(formatNet(parseNet("10.1.2.3")!), "10.1.2.3/32");
  assert.equal(formatNet(parseNet("2001:db8:ffff::1/32")!), "2001:db8::/32");
  assert.equal(formatNet(parseNet("0.0.0.0/0")!), "0.0.0.0/0");
  assert.equal(parseNet("10.0.0.0/33"), null);
  assert.equal(parseNet("10.0.0.0/x"), null);
  assert.equal(parseNet("::/129"), null);
});

Deno.test("netContains() tests membership for v4, v6 and v4-mapped addresses", () => {
  const net8 = parseNet("10.0.0.0/8")!;
  assert.ok(netContains(net8, parseIp("10.200.1.1")!));
  assert.ok(!netContains(net8, parseIp("11.0.0.1")!));
  assert.ok(netContains(net8, parseIp("::ffff:10.1.1.1")!));
  assert.ok(!netContains(net8, parseIp("2001:db8::1")!));
  const v6 = parseNet("2001:db8::/32")!;
  assert.ok(netContains(v6, parseIp("2001:db8:1::5")!));
  assert.ok(!netContains(v6, parseIp("2001:db9::5")!));
  assert.ok(!netContains(v6, parseIp("10.0.0.1")!));
  assert.ok(netContains(parseNet("0.0.0.0/0")!, parseIp("1.2.3.4")!));
});

Deno.test("ipTrunc() keeps the leading bits", () => {
  assert.equal(formatIp(ipTrunc(parseIp("192.168.37.200")!, 24)), "192.168.37.0");
  assert.equal(formatIp(ipTrunc(parseIp("192.168.37.200")!, 0)), "0.0.0.0");
  assert.equal(formatIp(ipTrunc(parseIp("192.168.37.200")!, 40)), "192.168.37.200");
  assert.equal(formatIp(ipTrunc(parseIp("2001:db8:1:2:3:4:5:6")!, 48)), "2001:db8:1::");
  assert.deepEqual(ipTrunc(new IpAddr(4, 0xffffffff), 1), new IpAddr(4, 0x80000000));
});
