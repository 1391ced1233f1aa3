/**
 * llama.cpp's llama-server as a replay target: `/completion` with token-id prompts (what it serves
 * best for exact blocks), `cache_prompt` on, the slot chosen by the server (prompt similarity, then
 * least recently used) and its host-memory prompt cache as shipped. A next turn sends the parent's
 * prompt + the tokens the parent generated + what the trace adds, so its own output can be reused
 * exactly as Frontier's live KV reuses it. Prefilled/cached/queue come from the server's `timings`.
 */
import type { BlockTokens } from "./block-tokens.ts";
import type { ReplayTarget, TurnResult } from "./replay.ts";
import type { ScaledRequest } from "./scale.ts";

interface CompletionChunk {
  content?: string;
  tokens?: number[];
  stop?: boolean;
  timings?: { prompt_n?: number; cache_n?: number; prompt_ms?: number; predicted_n?: number };
  error?: { message?: string };
}

/** GBNF: any run of printable ASCII. */
const PRINTABLE_ASCII = "root ::= [ -~]*";

export function llamaServerTarget(url: string, blocks: BlockTokens): ReplayTarget {
  const contexts = new Map<number, number[]>();
  return {
    name: "llama-server",
    async send(request: ScaledRequest, parent: ScaledRequest | undefined): Promise<TurnResult> {
      const tokens = blocks.prompt(request.hashIds, request.inputLength);
      let prompt = tokens;
      if (parent !== undefined) {
        const context = contexts.get(parent.id);
        if (!context) throw new Error(`no context for turn ${parent.id}`);
        prompt = [...context, ...tokens.slice(parent.inputLength + parent.outputLength)];
      }
      const started = performance.now();
      const res = await fetch(`${url}/completion`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          prompt,
          n_predict: request.outputLength,
          cache_prompt: true,
          return_tokens: true,
          // llama-server parses every output as chat content and fails a stream whose bytes are not
          // valid UTF-8, which the random-weight byte-level model emits; printable ASCII always is
          // (a real model's output is valid UTF-8 anyway). The grammar costs llama-server, not Frontier.
          grammar: PRINTABLE_ASCII,
          stream: true,
        }),
      });
      if (res.status !== 200 || !res.body) throw new Error(`llama-server answered ${res.status}: ${await res.text()}`);
      let ttftMs = Number.NaN;
      let timings: CompletionChunk["timings"];
      const output: number[] = [];
      const decoder = new TextDecoder();
      let buffer = "";
      const reader = res.body.getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (!line.startsWith("data:")) continue;
          const chunk = JSON.parse(line.slice(5)) as CompletionChunk;
          if (chunk.error) throw new Error(`llama-server stream error: ${chunk.error.message}`);
          if (chunk.tokens && chunk.tokens.length > 0) {
            if (Number.isNaN(ttftMs)) ttftMs = performance.now() - started;
            output.push(...chunk.tokens);
          }
          if (chunk.timings) timings = chunk.timings;
        }
      }
      const e2eMs = performance.now() - started;
      if (!timings) throw new Error("llama-server sent no timings");
      contexts.set(request.id, [...prompt, ...output]);
      const prefilled = timings.prompt_n ?? 0;
      return {
        ttftMs: Number.isNaN(ttftMs) ? e2eMs : ttftMs,
        e2eMs,
        promptTokens: prompt.length,
        cachedTokens: prompt.length - prefilled,
        outputTokens: output.length,
        // Send → first token, less the server's own prompt processing: the wait for a slot (and the
        // first decode step and the HTTP hop, a few ms).
        queueMs: Math.max(0, (Number.isNaN(ttftMs) ? e2eMs : ttftMs) - (timings.prompt_ms ?? 0)),
      };
    },
  };
}
