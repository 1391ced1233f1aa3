/**
 * The bounds of a string or number schema as the grammar holds them: `minLength`/`maxLength`,
 * `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum` (a number, or draft 4's boolean
 * beside `minimum`/`maximum`). A bound the grammar cannot hold exactly is an error naming its
 * keyword; the converter turns it into the client's 400.
 */
import { decimalOf, fractionDigits, scaled } from "./number-range.ts";

type Schema = Record<string, unknown>;

/** Why a keyword cannot be held. */
export interface BoundError {
  keyword: string;
  message: string;
}

/**
 * Numbers in units of 10^-`fraction`: lo..hi, both inclusive. `span` is the default magnitude
 * bound (the unbounded grammar's), in the same units.
 */
export interface Bounds {
  lo: bigint;
  hi: bigint;
  fraction: number;
  span: bigint;
}

/** Fraction digits a number may get at most, however fine its bounds. */
const MAX_FRACTION_DIGITS = 12;

/** A string's length: minLength..maxLength, `cap` standing in for a larger or absent maxLength. */
export function stringBounds(s: Schema, cap: number, maxMinLength: number): { min: number; max: number } | BoundError {
  const length = (keyword: string): number | BoundError | undefined => {
    const v = s[keyword];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
      return { keyword, message: `must be a non-negative integer (got ${JSON.stringify(v)})` };
    return v;
  };
  const minLength = length("minLength");
  const maxLength = length("maxLength");
  if (typeof minLength === "object") return minLength;
  if (typeof maxLength === "object") return maxLength;
  const min = minLength ?? 0;
  if (min > maxMinLength)
    return { keyword: "minLength", message: `a forced call's strings are at most ${maxMinLength} characters` };
  if (maxLength !== undefined && maxLength < min)
    return { keyword: "maxLength", message: `${maxLength} is below minLength ${min}: no string fits` };
  return { min, max: Math.min(maxLength ?? Number.POSITIVE_INFINITY, Math.max(cap, min)) };
}

interface Bound {
  keyword: string;
  value: number;
  exclusive: boolean;
}

/**
 * The numeric range of an integer (`fraction` 0) or number schema. The grid is 10^-fraction,
 * finer when a bound has more fraction digits (up to MAX_FRACTION_DIGITS); a missing side is the
 * unbounded grammar's (±(10^intDigits − 1 unit)), shifted past the other bound where that lies
 * outside it.
 */
export function numericBounds(s: Schema, fraction: number, intDigits: number): Bounds | BoundError {
  const lower: Bound[] = [];
  const upper: Bound[] = [];
  for (const [keyword, list, exclusiveKey] of [
    ["minimum", lower, "exclusiveMinimum"],
    ["maximum", upper, "exclusiveMaximum"],
  ] as const) {
    const v = s[keyword];
    const flag = s[exclusiveKey];
    if (v !== undefined) {
      const error = checkNumber(keyword, v);
      if (error !== undefined) return error;
      list.push({ keyword, value: v as number, exclusive: flag === true });
    }
    if (flag !== undefined && typeof flag !== "boolean") {
      const error = checkNumber(exclusiveKey, flag);
      if (error !== undefined) return error;
      list.push({ keyword: exclusiveKey, value: flag as number, exclusive: true });
    }
  }
  const integer = fraction === 0;
  const f = integer
    ? 0
    : Math.min(
        MAX_FRACTION_DIGITS,
        Math.max(fraction, ...[...lower, ...upper].map((b) => fractionDigits(decimalOf(b.value)))),
      );
  const lowUnits = (b: Bound): bigint =>
    b.exclusive ? scaled(decimalOf(b.value), f, "floor") + 1n : scaled(decimalOf(b.value), f, "ceil");
  const highUnits = (b: Bound): bigint =>
    b.exclusive ? scaled(decimalOf(b.value), f, "ceil") - 1n : scaled(decimalOf(b.value), f, "floor");
  const span = 10n ** BigInt(intDigits + f) - 1n;
  const lows = lower.map(lowUnits);
  const highs = upper.map(highUnits);
  const maxOf = (xs: bigint[]): bigint | undefined =>
    xs.reduce<bigint | undefined>((a, x) => (a === undefined || x > a ? x : a), undefined);
  const minOf = (xs: bigint[]): bigint | undefined =>
    xs.reduce<bigint | undefined>((a, x) => (a === undefined || x < a ? x : a), undefined);
  const lo0 = maxOf(lows);
  const hi0 = minOf(highs);
  const lo = lo0 ?? (hi0 !== undefined && hi0 < -span ? hi0 - span : -span);
  const hi = hi0 ?? (lo > span ? lo + span : span);
  if (lo > hi) {
    const named = [...lower, ...upper].map((b) => `${b.keyword} ${b.value}`).join(", ");
    const what = integer ? "integer" : `number with at most ${f} fraction digits`;
    return {
      keyword: (upper[0] ?? lower[0] ?? { keyword: "maximum" }).keyword,
      message: `no ${what} satisfies ${named}`,
    };
  }
  return { lo, hi, fraction: f, span };
}

function checkNumber(keyword: string, v: unknown): BoundError | undefined {
  if (typeof v !== "number" || !Number.isFinite(v))
    return { keyword, message: `must be a number (got ${JSON.stringify(v)})` };
  if (Math.abs(v) > Number.MAX_SAFE_INTEGER)
    return { keyword, message: `${v} is past 2^53; bounds that large are not held exactly` };
  return undefined;
}
