/** Request limits enforced at the edge (and re-checked by the worker where it matters). */
export const LIMITS = {
  /** Largest accepted request body. */
  maxBodyBytes: 32 * 1024 * 1024,
  maxMessages: 10_000,
  maxTools: 512,
  /** Anthropic tool names; OpenAI allows 64. Both: [a-zA-Z0-9_-]. */
  maxToolNameLength: 128,
  maxOpenAiToolNameLength: 64,
  /** Nesting of objects and arrays in a request body (deeper bodies are a 400 before parsing). */
  maxJsonDepth: 64,
  maxStopSequences: 16,
  maxStopSequenceLength: 256,
  /** Upper bound of `max_tokens` (the worker also caps it by its free context). */
  maxOutputTokens: 128_000,
  /** The output budget of a request that sets none (the worker's default; the edge reserves it). */
  defaultMaxOutputTokens: 4096,
} as const;
