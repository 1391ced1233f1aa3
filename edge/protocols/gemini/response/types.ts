/** The Gemini API's response shapes Frontier renders (`GenerateContentResponse` and its parts). */

export type GeminiOutputPart =
  | { text: string; thought?: true; thoughtSignature?: string }
  | { functionCall: { id: string; name: string; args: Record<string, unknown> } };

export type GeminiFinishReason = "STOP" | "MAX_TOKENS" | "MALFORMED_FUNCTION_CALL";

export interface GeminiUsageMetadata {
  /** Every prompt token, the reused ones included. */
  promptTokenCount: number;
  /** Of those, reused from the session's KV (omitted when none, as Gemini does). */
  cachedContentTokenCount?: number;
  /** The answer's tokens, its thinking not included. */
  candidatesTokenCount: number;
  /** The tokens the model sampled thinking (omitted when none). */
  thoughtsTokenCount?: number;
  totalTokenCount: number;
  promptTokensDetails: { modality: "TEXT"; tokenCount: number }[];
  cacheTokensDetails?: { modality: "TEXT"; tokenCount: number }[];
}

export interface GeminiCandidate {
  content?: { role: "model"; parts: GeminiOutputPart[] };
  finishReason?: GeminiFinishReason;
  index: 0;
}

export interface GeminiResponse {
  candidates: GeminiCandidate[];
  usageMetadata?: GeminiUsageMetadata;
  modelVersion: string;
  responseId: string;
}
