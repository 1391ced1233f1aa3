/**
 * Which resolved addresses a hosted web_fetch may connect to. Public unicast only: loopback,
 * private (RFC 1918), CGNAT, link-local (cloud metadata lives there), multicast, reserved and
 * documentation ranges, IPv6 ULA / link-local / loopback, and IPv4-mapped or -translated forms of
 * any of those are refused. Loopback is allowed only when the deployment says so (tests).
 */
import { isIP } from "node:net";

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** IPv4 ranges refused, as [first octets..., prefix length]. */
const BLOCKED_V4: readonly [string, number, string][] = [
  ["0.0.0.0", 8, "this-network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

export function checkAddress(address: string, allowLoopback: boolean): AddressVerdict {
  const family = isIP(address);
  if (family === 4) return checkV4(address, allowLoopback);
  if (family === 6) return checkV6(address, allowLoopback);
  return { allowed: false, reason: "not an IP address" };
}

function checkV4(address: string, allowLoopback: boolean): AddressVerdict {
  const value = v4Value(address);
  for (const [base, bits, reason] of BLOCKED_V4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((value & mask) >>> 0 === (v4Value(base) & mask) >>> 0) {
      if (reason === "loopback" && allowLoopback) return { allowed: true };
      return { allowed: false, reason };
    }
  }
  return { allowed: true };
}

function v4Value(address: string): number {
  return address.split(".").reduce((acc, part) => ((acc << 8) | Number(part)) >>> 0, 0);
}

function checkV6(address: string, allowLoopback: boolean): AddressVerdict {
  const words = v6Words(address);
  if (!words) return { allowed: false, reason: "unparsable IPv6 address" };
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = words;
  const embeddedV4 = `${w6 >> 8}.${w6 & 0xff}.${w7 >> 8}.${w7 & 0xff}`;
  const zeroHead = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0;
  if (zeroHead && w4 === 0 && w5 === 0 && w6 === 0 && w7 === 0) return { allowed: false, reason: "unspecified" };
  if (zeroHead && w4 === 0 && w5 === 0 && w6 === 0 && w7 === 1) {
    return allowLoopback ? { allowed: true } : { allowed: false, reason: "loopback" };
  }
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64): judge the IPv4 inside.
  if (zeroHead && w4 === 0 && (w5 === 0xffff || w5 === 0)) return checkV4(embeddedV4, allowLoopback);
  if (w0 === 0x64 && w1 === 0xff9b) return checkV4(embeddedV4, allowLoopback);
  if ((w0 & 0xfe00) === 0xfc00) return { allowed: false, reason: "unique-local" };
  if ((w0 & 0xffc0) === 0xfe80) return { allowed: false, reason: "link-local" };
  if ((w0 & 0xffc0) === 0xfec0) return { allowed: false, reason: "site-local" };
  if ((w0 & 0xff00) === 0xff00) return { allowed: false, reason: "multicast" };
  if (w0 === 0x2001 && w1 === 0x0db8) return { allowed: false, reason: "documentation" };
  // 6to4 (2002::/16) embeds an IPv4 in words 1-2.
  if (w0 === 0x2002) return checkV4(`${w1 >> 8}.${w1 & 0xff}.${w2 >> 8}.${w2 & 0xff}`, allowLoopback);
  return { allowed: true };
}

/** Eight 16-bit words of an IPv6 address (a trailing dotted IPv4 and one `::` allowed). */
function v6Words(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v = v4Value(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(v >>> 16).toString(16)}:${(v & 0xffff).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((w) => Number.parseInt(w, 16)));
  const head = parse(halves[0] ?? "");
  const tail = halves.length === 2 ? parse(halves[1] ?? "") : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const words = [...head, ...new Array<number>(Math.max(0, fill)).fill(0), ...tail];
  if (words.length !== 8 || words.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff)) return undefined;
  return words;
}
