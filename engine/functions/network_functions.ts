/** Network functions: IP(s) NET(s) ip_trunc(ip, bits). */

import { ipTrunc, parseIp, parseNet } from "../values/ip.ts";
import { scalar } from "../values/types.ts";
import { IpAddr, IpNet, type Value } from "../values/values.ts";
import { type FunctionDef, returns, strict2 } from "./function_def.ts";

/** A constructor from text: a bad constant is a compile-time error, a bad value gives null. */
function fromText(
  name: string,
  what: string,
  example: string,
  convert: (v: Value) => Value,
): FunctionDef["compile"] {
  return ([f], [arg], ctx) => {
    if (arg!.constant && arg!.constant.value !== null) {
      const value = convert(arg!.constant.value);
      if (value === null) {
        ctx.fail(
          `${name}: ${
            JSON.stringify(arg!.constant.value)
          } is not ${what}; expected e.g. ${example}`,
          0,
        );
      }
      return () => value;
    }
    return (row) => {
      const v = f!(row);
      return v === null ? null : convert(v);
    };
  };
}

export const NETWORK_FUNCTIONS: readonly FunctionDef[] = [
  {
    name: "ip",
    signature: "IP(s STRING)",
    params: ["ANY"],
    result: returns(scalar("IPADDR")),
    compile: fromText(
      "IP",
      "an IP address",
      "'10.0.0.1' or '2001:db8::1'",
      (v) => (v instanceof IpAddr ? v : typeof v === "string" ? parseIp(v) : null),
    ),
  },
  {
    name: "net",
    signature: "NET(s STRING)",
    params: ["ANY"],
    result: returns(scalar("IPNET")),
    compile: fromText(
      "NET",
      "a network",
      "'10.0.0.0/8' or '2001:db8::/32'",
      (v) => (v instanceof IpNet ? v : typeof v === "string" ? parseNet(v) : null),
    ),
  },
  {
    name: "ip_trunc",
    signature: "ip_trunc(ip IPADDR, bits INTEGER)",
    params: ["IPADDR", "WHOLE"],
    result: returns(scalar("IPADDR")),
    compile: strict2((ip: IpAddr, bits: number) => ipTrunc(ip, bits)),
  },
];
