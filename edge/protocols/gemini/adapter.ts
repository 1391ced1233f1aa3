/**
 * `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent` as a protocol adapter:
 * validate, mark the thoughts whose signature Frontier minted, decode into the canonical turn (the
 * session is the one the trailing functionResponse IDs name, else the one the replayed functionCall
 * IDs name, else new), and render Gemini's responses. Function calls get `call_…` IDs minted with
 * the session, so the next request's functionResponses continue the live KV with only the suffix
 * prefilled. The pipeline (turn/pipeline.ts) does the rest.
 */

import { signThinking } from "../../../shared/thinking-signature.ts";
import { requestHint } from "../../session/routing.ts";
import type { TurnBindings } from "../../turn/bindings.ts";
import type { DecodeContext, ProtocolAdapter } from "../../turn/pipeline.ts";
import { toGeminiWorkerTurn } from "./request/normalize.ts";
import { markOwnThoughts } from "./request/own-thoughts.ts";
import { collectGeminiRoutingIds } from "./request/routing-ids.ts";
import { validateGeminiRequest } from "./request/validate.ts";
import { JSON_ARRAY_FRAMING, SSE_FRAMING } from "./response/framing.ts";
import { GeminiTurn } from "./response/turn.ts";

/** How the answer goes out: one JSON response, SSE (`?alt=sse`), or a streamed JSON array. */
export type GeminiDelivery = "json" | "sse" | "json-array";

export function geminiAdapter(model: string, delivery: GeminiDelivery): ProtocolAdapter<TurnBindings, GeminiTurn> {
  return {
    protocol: "gemini",
    async decode(json: unknown, { headers, rc, caller }: DecodeContext<TurnBindings>) {
      const request = validateGeminiRequest(json, model);
      await markOwnThoughts(request.contents, (text) => signThinking(rc.config.idSecret, caller.tenant, text));
      const includeThoughts = request.generation.includeThoughts;
      return {
        model,
        turn: toGeminiWorkerTurn(request),
        ids: collectGeminiRoutingIds(request.contents),
        hint: requestHint(headers),
        stream: delivery !== "json",
        toolsNotOffered: request.toolsNotOffered,
        renderer: () =>
          new GeminiTurn(model, includeThoughts, delivery === "json-array" ? JSON_ARRAY_FRAMING : SSE_FRAMING),
      };
    },
  };
}
