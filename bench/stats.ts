/** Small statistics helpers for the benchmark tables. */
/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function spread(values: readonly number[]): string {
  if (values.length < 2) return "n=1";
  return `${fmt(Math.min(...values))}–${fmt(Math.max(...values))} (n=${values.length})`;
}

export function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return "n/a";
  return value >= 100 ? value.toFixed(0) : value.toFixed(digits);
}

/** Median and min–max of ratios, formatted as "12.3x" and "10.1x–14.2x (n=3)". */
export function ratioSpread(ratios: readonly number[], digits = 2): { value: string; spread: string } {
  const finite = ratios.filter((r) => Number.isFinite(r));
  if (finite.length === 0) return { value: "n/a", spread: "n=0" };
  const x = (v: number) => `${v >= 100 ? v.toFixed(0) : v.toFixed(digits)}x`;
  const spreadText =
    finite.length < 2 ? "n=1" : `${x(Math.min(...finite))}–${x(Math.max(...finite))} (n=${finite.length})`;
  return { value: x(median(finite)), spread: spreadText };
}
