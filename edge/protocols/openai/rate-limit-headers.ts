/**
 * OpenAI's rate-limit headers (`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`), the reset as
 * a duration from now the way OpenAI writes it (`20ms`, `1.5s`, `6m0s`).
 */
import type { RateLimitSnapshot, RateWindow } from "../../core/rate-limits.ts";

export function openAiRateLimitHeaders(snapshot: RateLimitSnapshot, now: number): Record<string, string> {
  return {
    ...dimension("requests", snapshot.requests, now),
    ...dimension("tokens", snapshot.tokens, now),
  };
}

function dimension(name: string, window: RateWindow | undefined, now: number): Record<string, string> {
  if (!window) return {};
  return {
    [`x-ratelimit-limit-${name}`]: String(window.limit),
    [`x-ratelimit-remaining-${name}`]: String(window.remaining),
    [`x-ratelimit-reset-${name}`]: duration(Math.max(0, window.resetAt - now)),
  };
}

/** Go-style duration text: `0s`, `20ms`, `1.5s`, `6m0s`. */
export function duration(ms: number): string {
  const rounded = Math.ceil(ms);
  if (rounded === 0) return "0s";
  if (rounded < 1000) return `${rounded}ms`;
  const seconds = rounded / 1000;
  if (seconds < 60) return `${trim(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${trim(seconds - minutes * 60)}s`;
}

function trim(seconds: number): string {
  return String(Math.round(seconds * 1000) / 1000);
}
