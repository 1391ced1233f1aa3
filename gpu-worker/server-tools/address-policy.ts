/**
 * Which resolved addresses a hosted web_fetch may connect to: public unicast only. Every range of
 * the IANA IPv4 and IPv6 Special-Purpose Address Registries is refused (whether the registry marks
 * it globally reachable or not: PCP/TURN anycast, AS112 and AMT are nothing a page fetch needs),
 * plus IPv4 multicast and reserved space, IPv6 multicast and site-local, and all IPv6 space outside
 * global unicast (2000::/3). Forms that carry an IPv4 address (mapped ::ffff:0:0/96, translated
 * ::ffff:0:0:0/96, compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are refused as a whole;
 * the reason names the embedded IPv4's range when that one is special too. Loopback (127.0.0.0/8,
 * ::1 only) is allowed when the deployment says so (tests).
 */
import { isIP } from "node:net";

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** IPv4 ranges refused: [network, prefix length, reason]. The IANA registry, multicast and 240/4. */
const BLOCKED_V4: readonly (readonly [string, number, string])[] = [
  ["0.0.0.0", 8, "this-network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  // IETF protocol assignments: DS-Lite, PCP/TURN anycast, NAT64 discovery (192.0.0.0/29 … .171/32).
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.31.196.0", 24, "as112"],
  ["192.52.193.0", 24, "amt"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["192.175.48.0", 24, "as112"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  // Reserved for future use, and 255.255.255.255 (limited broadcast) inside it.
  ["240.0.0.0", 4, "reserved"],
];

/** IPv6 ranges refused, checked before the "outside 2000::/3" rule: [network, prefix length, reason]. */
const BLOCKED_V6: readonly (readonly [string, number, string])[] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["::ffff:0:0", 96, "ipv4-mapped"],
  ["::ffff:0:0:0", 96, "ipv4-translated"],
  ["::", 96, "ipv4-compatible"],
  ["64:ff9b::", 96, "nat64"],
  ["64:ff9b:1::", 48, "nat64-local"],
  ["100::", 64, "discard-only"],
  ["100:0:0:1::", 64, "dummy-prefix"],
  // IETF protocol assignments: Teredo 2001::/32, PCP/TURN/DNS-SD anycast, benchmarking, AMT,
  // AS112, ORCHID(v2), drone remote ID.
  ["2001::", 23, "ietf-protocol"],
  ["2001:db8::", 32, "documentation"],
  ["2002::", 16, "6to4"],
  ["2620:4f:8000::", 48, "as112"],
  ["3fff::", 20, "documentation"],
  ["5f00::", 16, "srv6-sid"],
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

export function checkAddress(address: string, allowLoopback: boolean): AddressVerdict {
  const family = isIP(address);
  if (family === 4) return checkV4(address, allowLoopback);
  if (family === 6) return checkV6(address, allowLoopback);
  return { allowed: false, reason: "not an IP address" };
}

/** 127.0.0.0/8 or ::1, written plainly (not an IPv4-carrying IPv6 form). */
export function isLoopback(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return v4Value(address) >>> 24 === 127;
  const words = family === 6 ? v6Words(address) : undefined;
  return words?.every((w, i) => w === (i === 7 ? 1 : 0)) === true;
}

function checkV4(address: string, allowLoopback: boolean): AddressVerdict {
  const reason = v4Reason(v4Value(address));
  if (reason === undefined || (reason === "loopback" && allowLoopback)) return { allowed: true };
  return { allowed: false, reason };
}

function v4Reason(value: number): string | undefined {
  for (const [base, bits, reason] of BLOCKED_V4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((value & mask) >>> 0 === (v4Value(base) & mask) >>> 0) return reason;
  }
  return undefined;
}

function v4Value(address: string): number {
  return address.split(".").reduce((acc, part) => ((acc << 8) | Number(part)) >>> 0, 0);
}

const V6_RANGES = BLOCKED_V6.map(([base, bits, reason]) => {
  const words = v6Words(base);
  if (!words) throw new Error(`bad IPv6 range ${base}`);
  return { words, bits, reason };
});

function checkV6(address: string, allowLoopback: boolean): AddressVerdict {
  const words = v6Words(address);
  if (!words) return { allowed: false, reason: "unparsable IPv6 address" };
  const range = V6_RANGES.find((r) => inPrefix(words, r.words, r.bits));
  if (range) {
    if (range.reason === "loopback" && allowLoopback) return { allowed: true };
    return { allowed: false, reason: embeddedV4Reason(words, range.reason) ?? range.reason };
  }
  // Only 2000::/3 is allocated as global unicast; the rest of the space is reserved by the IETF.
  if ((words[0] ?? 0) >> 13 !== 0b001) return { allowed: false, reason: "reserved" };
  return { allowed: true };
}

/** For a form that carries an IPv4 address: that address's range, when it is special too. */
function embeddedV4Reason(words: readonly number[], form: string): string | undefined {
  const [, w1 = 0, w2 = 0, , , , w6 = 0, w7 = 0] = words;
  const v4 = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0;
  switch (form) {
    case "ipv4-mapped":
    case "ipv4-translated":
    case "ipv4-compatible":
    case "nat64":
      return v4Reason(v4(w6, w7));
    case "6to4":
      return v4Reason(v4(w1, w2));
    default:
      return undefined;
  }
}

function inPrefix(words: readonly number[], base: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((words[i] ?? 0) & mask) !== ((base[i] ?? 0) & mask)) return false;
  }
  return true;
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
