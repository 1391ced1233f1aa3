/**
 * The Gemini API's key: the `x-goog-api-key` header (what @google/genai sends), the `key` query
 * parameter (REST examples), or `Authorization: Bearer` (Gemini CLI with
 * `GEMINI_API_KEY_AUTH_MECHANISM=bearer`). Read from the headers and URL only, before the body.
 * Run-time keys and `API_KEYS` keys alike (tenancy/auth.ts); whether a run-time key is still good is
 * its tenant's authority's answer, asked on every request like every other route's.
 */
import { type CallerIdentifier, identifyKey } from "../../tenancy/auth.ts";

const MESSAGES = {
  missing: "API key required: send it in the x-goog-api-key header (or the key query parameter)",
  invalid: "API key not valid. Please pass a valid API key.",
};

export const identifyGeminiCaller: CallerIdentifier = (request, config) =>
  identifyKey(presentedGeminiKey(request), config, MESSAGES);

function presentedGeminiKey(request: Request): string | undefined {
  const header = request.headers.get("x-goog-api-key")?.trim();
  if (header) return header;
  const query = new URL(request.url).searchParams.get("key")?.trim();
  if (query) return query;
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
}
