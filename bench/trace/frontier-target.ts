/**
 * Frontier as a replay target: the Responses API through the edge, which serves a conversation best
 * by `previous_response_id` (the edge rebuilds the history, the worker continues its live KV). A first
 * turn sends its prompt as one user message; a next turn sends only what the trace adds after the
 * parent's prompt + output, naming the parent's response. Prompts are text over the 1:1 alphabet
 * (block-tokens.ts): Frontier's API takes no token ids, and this text tokenizes to exactly the ids.
 */
import { decodeSseStream } from "../../test/support/sse-decoder.ts";
import { BENCH_KEY } from "../clients/edge-client.ts";
import type { BlockTokens } from "./block-tokens.ts";
import { tokensToText } from "./block-tokens.ts";
import type { ReplayTarget, TurnResult } from "./replay.ts";
import type { ScaledRequest } from "./scale.ts";

interface ResponseUsage {
  input_tokens: number;
  output_tokens: number;
  input_tokens_details?: { cached_tokens?: number };
}

export function frontierTarget(name: string, edgeUrl: string, blocks: BlockTokens): ReplayTarget {
  const responseIds = new Map<number, string>();
  return {
    name,
    async send(request: ScaledRequest, parent: ScaledRequest | undefined): Promise<TurnResult> {
      const tokens = blocks.prompt(request.hashIds, request.inputLength);
      const previous = parent === undefined ? undefined : responseIds.get(parent.id);
      if (parent !== undefined && previous === undefined) throw new Error(`no response id for turn ${parent.id}`);
      const newTokens = parent === undefined ? tokens : tokens.slice(parent.inputLength + parent.outputLength);
      const body = {
        model: "frontier-test",
        input: [{ role: "user", content: tokensToText(newTokens) }],
        max_output_tokens: request.outputLength,
        stream: true,
        ...(previous === undefined ? {} : { previous_response_id: previous }),
      };
      const started = performance.now();
      const res = await fetch(`${edgeUrl}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` },
        body: JSON.stringify(body),
      });
      if (res.status !== 200 || !res.body) throw new Error(`edge answered ${res.status}: ${await res.text()}`);
      const decision = /decision=([^;]+)/.exec(res.headers.get("x-frontier-cache") ?? "")?.[1];
      let ttftMs = Number.NaN;
      let usage: ResponseUsage | undefined;
      let id = "";
      for await (const event of decodeSseStream(res.body)) {
        if (Number.isNaN(ttftMs) && event.event === "response.output_text.delta") ttftMs = performance.now() - started;
        if (event.event === "response.completed" || event.event === "response.incomplete") {
          const response = (JSON.parse(event.data) as { response: { id: string; usage: ResponseUsage } }).response;
          id = response.id;
          usage = response.usage;
        } else if (event.event === "error" || event.event === "response.failed") {
          throw new Error(`stream error: ${event.data.slice(0, 300)}`);
        }
      }
      const e2eMs = performance.now() - started;
      if (!usage || id === "") throw new Error("the stream ended without response.completed");
      responseIds.set(request.id, id);
      return {
        // A turn that sampled no text (an immediate end) has its first token at the end.
        ttftMs: Number.isNaN(ttftMs) ? e2eMs : ttftMs,
        e2eMs,
        promptTokens: usage.input_tokens,
        cachedTokens: usage.input_tokens_details?.cached_tokens ?? 0,
        outputTokens: usage.output_tokens,
        ...(decision === undefined ? {} : { decision }),
      };
    },
  };
}
