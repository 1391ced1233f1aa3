/**
 * Exact GBNF for bounded JSON numbers. A range of integers is split by digit count, then by the
 * longest common prefix of its ends (the classic regex-for-a-range construction), so the grammar
 * matches exactly the decimal spellings of the integers in it, no leading zeros, no `-0`. A
 * number with up to `F` fraction digits is the same over the grid 10^-F: for each fraction length
 * k ≤ F, the values of that grid in range, written `Q.ddd`. Bounds are read as the decimals the
 * schema wrote, so `maximum: 0.1` is 0.1, not the double below it.
 */

/** A decimal `m × 10^e`, exactly. */
interface Decimal {
  m: bigint;
  e: number;
}

const TEN = 10n;
const pow10 = (n: number): bigint => TEN ** BigInt(n);

/** The decimal a JSON number was written as (its shortest round-trip spelling). */
export function decimalOf(x: number): Decimal {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (match === null) throw new RangeError(`not a finite number: ${x}`);
  const [, sign = "", int = "0", frac = "", exp = "0"] = match;
  return { m: BigInt(`${sign}${int}${frac}`), e: Number(exp) - frac.length };
}

/** Digits after the point the decimal needs. */
export const fractionDigits = (d: Decimal): number => Math.max(0, -d.e);

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

const ceilDiv = (a: bigint, b: bigint): bigint => -floorDiv(-a, b);

/** `d × 10^f`, rounded down or up to an integer. */
export function scaled(d: Decimal, f: number, round: "floor" | "ceil"): bigint {
  const shift = d.e + f;
  if (shift >= 0) return d.m * pow10(shift);
  return round === "floor" ? floorDiv(d.m, pow10(-shift)) : ceilDiv(d.m, pow10(-shift));
}

const seq = (...parts: string[]): string => parts.filter((p) => p !== "").join(" ");
const alt = (alts: string[]): string => (alts.length === 1 ? (alts[0] as string) : `(${alts.join(" | ")})`);
const anyDigits = (n: number): string => (n === 0 ? "" : n === 1 ? "[0-9]" : `[0-9]{${n}}`);
const digitClass = (a: number, b: number): string => (a === b ? `"${a}"` : `[${a}-${b}]`);

/** Digit strings of one width from `a` to `b` (same length, a ≤ b as numbers). */
function fixedRange(a: string, b: string): string {
  if (a.length === 0) return "";
  if (a === b) return `"${a}"`;
  const a0 = Number(a[0]);
  const b0 = Number(b[0]);
  const restA = a.slice(1);
  const restB = b.slice(1);
  const n = restA.length;
  if (a0 === b0) return seq(`"${a0}"`, fixedRange(restA, restB));
  const alts: string[] = [];
  const lowFull = /^0*$/.test(restA);
  const highFull = /^9*$/.test(restB);
  if (!lowFull) alts.push(seq(`"${a0}"`, fixedRange(restA, "9".repeat(n))));
  const from = lowFull ? a0 : a0 + 1;
  const to = highFull ? b0 : b0 - 1;
  if (from <= to) alts.push(seq(digitClass(from, to), anyDigits(n)));
  if (!highFull) alts.push(seq(`"${b0}"`, fixedRange("0".repeat(n), restB)));
  return alt(alts);
}

/** Decimal spellings (no leading zeros) of the integers lo..hi, 0 ≤ lo ≤ hi. */
function uintRange(lo: bigint, hi: bigint): string {
  const alts: string[] = [];
  const low = lo.toString();
  const high = hi.toString();
  for (let d = low.length; d <= high.length; d++) {
    const from = d === low.length ? low : `1${"0".repeat(d - 1)}`;
    const to = d === high.length ? high : "9".repeat(d);
    alts.push(fixedRange(from, to));
  }
  return alt(alts);
}

/** Spellings `Q` or `Q.d…` (1..f fraction digits) of the values lo..hi in units of 10^-f, 0 ≤ lo ≤ hi. */
function unsignedRange(lo: bigint, hi: bigint, f: number): string {
  const alts: string[] = [];
  for (let k = 0; k <= f; k++) {
    const unit = pow10(f - k);
    const a = ceilDiv(lo, unit);
    const b = floorDiv(hi, unit);
    if (a > b) continue;
    if (k === 0) {
      alts.push(uintRange(a, b));
      continue;
    }
    const p = pow10(k);
    const pad = (r: bigint): string => r.toString().padStart(k, "0");
    const [qa, ra, qb, rb] = [a / p, a % p, b / p, b % p];
    if (qa === qb) {
      alts.push(seq(`"${qa}."`, fixedRange(pad(ra), pad(rb))));
      continue;
    }
    alts.push(seq(`"${qa}."`, fixedRange(pad(ra), "9".repeat(k))));
    if (qa + 1n <= qb - 1n) alts.push(seq(uintRange(qa + 1n, qb - 1n), `"."`, anyDigits(k)));
    alts.push(seq(`"${qb}."`, fixedRange("0".repeat(k), pad(rb))));
  }
  return alt(alts);
}

/**
 * A GBNF expression matching exactly the JSON spellings of the values lo..hi (in units of 10^-f,
 * lo ≤ hi) with at most `f` fraction digits: integers when f is 0. Never `-0`.
 */
export function numberRangeGbnf(lo: bigint, hi: bigint, f: number): string {
  const alts: string[] = [];
  if (lo < 0n) alts.push(seq(`"-"`, unsignedRange(hi < 0n ? -hi : 1n, -lo, f)));
  if (hi >= 0n) alts.push(unsignedRange(lo > 0n ? lo : 0n, hi, f));
  return alt(alts);
}
