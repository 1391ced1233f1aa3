/**
 * Errors are rendered in the shape of the route's protocol (itty's `error()` puts the status in the
 * body): OpenAI's on OpenAI's paths (404s included), Google's on the Gemini API's (`/v1beta/…`,
 * `/v1/models/{model}:{method}`), on `/v1/models` by the caller (Gemini clients send
 * `x-goog-api-key` or `?key=`, Anthropic clients `anthropic-version` or `x-api-key`), Anthropic's
 * elsewhere.
 */
import type { ApiError } from "../core/errors.ts";
import type { RateLimitSnapshot } from "../core/rate-limits.ts";
import { googleErrorResponse } from "./gemini/errors.ts";
import { anthropicErrorResponse } from "./messages/errors.ts";
import { anthropicRateLimitHeaders } from "./messages/rate-limit-headers.ts";
import { openAiErrorResponse } from "./openai/errors.ts";
import { openAiRateLimitHeaders } from "./openai/rate-limit-headers.ts";

/** The caller's rate-limit state as the headers of the protocol the path belongs to. */
export function rateLimitHeaders(request: Request, snapshot: RateLimitSnapshot, now: number): Record<string, string> {
  return errorProtocol(request) === "openai"
    ? openAiRateLimitHeaders(snapshot, now)
    : anthropicRateLimitHeaders(snapshot);
}

/** The error response in the shape of the protocol the path belongs to. */
export function renderError(error: ApiError, request: Request, requestId: string): Response {
  switch (errorProtocol(request)) {
    case "openai":
      return openAiErrorResponse(error, requestId);
    case "gemini":
      return googleErrorResponse(error, requestId);
    case "anthropic":
      return anthropicErrorResponse(error, requestId);
  }
}

/** OpenAI's API paths (Frontier serves chat/completions and responses; the others answer in its shape). */
const OPENAI_PATHS =
  /^\/v1\/(chat|completions|responses|embeddings|moderations|images|audio|assistants|threads|vector_stores|batches|fine_tuning|uploads|realtime|conversations)(\/|$)/;

function errorProtocol(request: Request): "openai" | "gemini" | "anthropic" {
  const path = new URL(request.url).pathname;
  if (OPENAI_PATHS.test(path)) return "openai";
  if (isGeminiPath(path) || (/^\/v1\/models(\/|$)/.test(path) && isGeminiCaller(request))) return "gemini";
  // Both protocols list models (and read their key): Anthropic clients send `anthropic-version` or `x-api-key`.
  if (/^\/v1\/(models|key)(\/|$)/.test(path)) {
    const anthropic = request.headers.has("anthropic-version") || request.headers.has("x-api-key");
    return anthropic ? "anthropic" : "openai";
  }
  return "anthropic";
}

/**
 * The Gemini API's paths: everything under `/v1beta`, and its model methods under `/v1`
 * (`/v1/models/{model}:generateContent`, where @google/genai 2.x and later send them).
 */
function isGeminiPath(path: string): boolean {
  return /^\/v1beta(\/|$)/.test(path) || /^\/v1\/models\/[^/]+(:|%3A)[A-Za-z]+$/i.test(path);
}

/** A Gemini API client: it sends its key as `x-goog-api-key` or `?key=` (the model list is shared with the others). */
export function isGeminiCaller(request: Request): boolean {
  return request.headers.has("x-goog-api-key") || new URL(request.url).searchParams.has("key");
}
