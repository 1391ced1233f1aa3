/**
 * An authority's refusal as the edge's error, protocol-neutral (each protocol renders it in its own
 * shape): a key that is no longer good is a 401, a model outside the allow-lists the protocol's 404
 * (`model_not_found`), a limit a 429 whose `retry-after` is when the window or budget period frees
 * room. A budget spent until a period end more than a minute away is not worth an SDK's automatic
 * retries: `x-should-retry: false` then.
 */
import { ApiError } from "../core/errors.ts";
import type { AuthorityRefusal, KeyRefusal } from "./authority/authority-api.ts";
import { units } from "./pricing.ts";

const KEY_MESSAGES: Record<KeyRefusal, string> = {
  unknown: "invalid x-api-key",
  revoked: "This API key has been revoked",
  inactive: "This API key is inactive",
  expired: "This API key has expired",
  archived: "This API key's tenant has been archived",
};

/** `invalidKey`: what the caller's protocol says for a key it does not know (auth.ts KeyMessages). */
export function refusalError(refusal: AuthorityRefusal, invalidKey?: string): ApiError {
  switch (refusal.kind) {
    case "key":
      return new ApiError(
        "authentication_error",
        refusal.why === "unknown" && invalidKey !== undefined ? invalidKey : KEY_MESSAGES[refusal.why],
      );
    case "model":
      return new ApiError(
        "not_found_error",
        `The model '${refusal.model}' does not exist or this API key may not use it`,
        { param: "model", code: "model_not_found" },
      );
    case "limit":
      return limitError(refusal);
    default:
      return checkNever(refusal);
  }
}

function limitError(refusal: Extract<AuthorityRefusal, { kind: "limit" }>): ApiError {
  const who = refusal.scope === "tenant" ? "This API key's tenant has" : "This API key has";
  const retry = `retry after ${refusal.retryAfterS} s`;
  const options = { retryAfter: refusal.retryAfterS, code: "rate_limit_exceeded" };
  switch (refusal.reason) {
    case "concurrency":
      return new ApiError(
        "rate_limit_error",
        `${who} more than ${refusal.limit} requests in flight; ${retry}`,
        options,
      );
    case "requests":
      return new ApiError(
        "rate_limit_error",
        `${who} more than ${refusal.limit} requests per minute; ${retry}`,
        options,
      );
    case "tokens":
      return new ApiError(
        "rate_limit_error",
        `${who} used its ${refusal.limit} tokens per minute (prefilled input + output, this request's max_tokens included); ${retry}`,
        options,
      );
    case "budget": {
      const amount = `${units(refusal.limit)} ${(refusal.currency ?? "usd").toUpperCase()}`;
      return new ApiError(
        "rate_limit_error",
        `${who} no budget left for this request (${amount} per ${refusal.period ?? "period"}, turns in flight included); ${retry}`,
        { retryAfter: refusal.retryAfterS, code: "insufficient_quota", shouldRetry: refusal.retryAfterS <= 60 },
      );
    }
    default:
      return checkNever(refusal.reason);
  }
}

function checkNever(value: never): never {
  throw new Error(`unexpected refusal ${JSON.stringify(value)}`);
}
