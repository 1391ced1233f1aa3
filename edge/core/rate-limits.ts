/**
 * A caller's rate-limit state as one admission saw it, protocol-neutral: each protocol renders it as
 * its own headers (Anthropic's `anthropic-ratelimit-*`, OpenAI's `x-ratelimit-*`). A dimension
 * without a limit is absent.
 */
export interface RateWindow {
  /** The limit per minute. */
  limit: number;
  /** What is left now (never negative). */
  remaining: number;
  /** Epoch ms when the window is whole again. */
  resetAt: number;
}

export interface RateLimitSnapshot {
  /** Requests per minute. */
  requests?: RateWindow;
  /** Input (prefilled) + output tokens per minute. */
  tokens?: RateWindow;
}

/** Where an admission leaves its snapshot for the response's headers (shared by copies of a request context). */
export interface RateLimitSlot {
  snapshot?: RateLimitSnapshot | undefined;
}
