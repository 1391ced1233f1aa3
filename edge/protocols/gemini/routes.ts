/**
 * The Gemini API's model routes: `POST /v1beta/models/{model}:{method}` for generateContent,
 * streamGenerateContent (`?alt=sse`: SSE; without: a streamed JSON array) and countTokens, each
 * authenticated by the Gemini key (`auth.ts`) from headers and URL before the body is read.
 */
import { ApiError } from "../../core/errors.ts";
import type { RequestContext } from "../../http/context.ts";
import type { TurnBindings } from "../../turn/bindings.ts";
import { turnRoute } from "../../turn/pipeline.ts";
import { type GeminiDelivery, geminiAdapter } from "./adapter.ts";
import { identifyGeminiCaller } from "./auth.ts";
import { handleGeminiCountTokens } from "./count-tokens.ts";

/** A path segment URL-decoded (one that is not valid percent-encoding is not found, never a 500). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw ApiError.notFound(`Not found: ${segment}`);
  }
}

/** `{model}:{method}`, the last path segment; the model as the client wrote it (URL-decoded). */
export function parseModelAction(segment: string): { model: string; method: string } {
  const decoded = decodeSegment(segment);
  const colon = decoded.lastIndexOf(":");
  if (colon <= 0) throw ApiError.notFound(`Not found: models/${decoded} (expected models/{model}:{method})`);
  return { model: decoded.slice(0, colon), method: decoded.slice(colon + 1) };
}

export function handleGeminiModelAction(request: Request, rc: RequestContext<TurnBindings>, segment: string) {
  const { model, method } = parseModelAction(segment);
  switch (method) {
    case "generateContent":
      return turnRoute(geminiAdapter(model, "json"), identifyGeminiCaller)(request, rc);
    case "streamGenerateContent": {
      const delivery: GeminiDelivery = new URL(request.url).searchParams.get("alt") === "sse" ? "sse" : "json-array";
      return turnRoute(geminiAdapter(model, delivery), identifyGeminiCaller)(request, rc);
    }
    case "countTokens":
      return handleGeminiCountTokens(request, rc, model);
    default:
      throw ApiError.notFound(
        `Method '${method}' is not served on models/${model}; use generateContent, streamGenerateContent or countTokens`,
      );
  }
}
