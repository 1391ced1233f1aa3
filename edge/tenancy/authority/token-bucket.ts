/**
 * A per-minute rate as a token bucket holding one minute's worth (`capacity`), refilled continuously.
 * A level may go below zero when a turn used more than it reserved; it then refills from there.
 */
export interface Bucket {
  level: number;
  at: number;
}

const MINUTE_MS = 60_000;

/** The bucket's level at `now` (a missing bucket is full). */
export function levelAt(bucket: Bucket | undefined, capacity: number, now: number): number {
  if (!bucket) return capacity;
  const elapsed = Math.max(0, now - bucket.at);
  return Math.min(capacity, bucket.level + (elapsed * capacity) / MINUTE_MS);
}

/** Milliseconds until the bucket holds `needed` (at most its capacity). */
export function msUntil(level: number, needed: number, capacity: number): number {
  const target = Math.min(needed, capacity);
  return level >= target ? 0 : ((target - level) * MINUTE_MS) / capacity;
}

/** Whether a demand of `amount` fits now: it must be there, or, larger than the whole bucket, the bucket must be full. */
export function fits(level: number, amount: number, capacity: number): boolean {
  return amount <= capacity ? level >= amount : level >= capacity;
}
