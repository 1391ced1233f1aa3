/**
 * Anthropic's rate-limit headers (what the Anthropic SDKs and Claude Code read): per dimension a
 * limit, what remains and when it is whole again (RFC 3339). Frontier's token rate counts prefilled
 * input and output together, so it is the `tokens` dimension (Anthropic's "most restrictive" one);
 * there are no separate input or output token rates to report.
 */
import type { RateLimitSnapshot, RateWindow } from "../../core/rate-limits.ts";

export function anthropicRateLimitHeaders(snapshot: RateLimitSnapshot): Record<string, string> {
  return {
    ...dimension("requests", snapshot.requests),
    ...dimension("tokens", snapshot.tokens),
  };
}

function dimension(name: string, window: RateWindow | undefined): Record<string, string> {
  if (!window) return {};
  return {
    [`anthropic-ratelimit-${name}-limit`]: String(window.limit),
    [`anthropic-ratelimit-${name}-remaining`]: String(window.remaining),
    [`anthropic-ratelimit-${name}-reset`]: new Date(Math.ceil(window.resetAt / 1000) * 1000)
      .toISOString()
      .replace(".000Z", "Z"),
  };
}
