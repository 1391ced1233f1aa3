/**
 * llama.cpp's llama-server as a replay target: `/completion` with token-id prompts (what it serves
 * best for exact blocks), `cache_prompt` on, the slot chosen by the server (prompt similarity, then
 * least recently used) and its host-memory prompt cache as shipped. A next turn sends the parent's
 * prompt + the tokens the parent generated + what the trace adds, so its own output can be reused
 * exactly as Frontier's live KV reuses it. Prefilled/cached/queue come from the server's `timings`.
 *
 * With a framing (`--llama-server-prompt framed`, the default) every prompt carries the chat framing
 * Frontier's worker prefills around the same turn (chat-framing.ts), so both systems are fed the same
 * token sequence; without one (`raw`) it gets the trace's token ids alone, as before issue 45's fix.
 */
import type { BlockTokens } from "./block-tokens.ts";
import { type ChatFraming, framedFirstTurn, framedNextTurn, outputInContext } from "./chat-framing.ts";
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

/** A request whose prompt llama-server did not account as prompt_n + cache_n = the tokens sent. */
export interface AccountingMismatch {
  id: number;
  sent: number;
  promptN: number;
  cacheN: number;
}

interface LlamaServerTarget extends ReplayTarget {
  /** Requests whose `timings` did not add up to the prompt sent (checked, reported as a violation). */
  readonly mismatches: readonly AccountingMismatch[];
}

export function llamaServerTarget(url: string, blocks: BlockTokens, framing?: ChatFraming): LlamaServerTarget {
  const contexts = new Map<number, readonly number[]>();
  const mismatches: AccountingMismatch[] = [];
  return {
    name: "llama-server",
    mismatches,
    async send(request: ScaledRequest, parent: ScaledRequest | undefined): Promise<TurnResult> {
      const tokens = blocks.prompt(request.hashIds, request.inputLength);
      let prompt = framing ? framedFirstTurn(framing, tokens) : tokens;
      if (parent !== undefined) {
        const context = contexts.get(parent.id);
        if (!context) throw new Error(`no context for turn ${parent.id}`);
        const added = tokens.slice(parent.inputLength + parent.outputLength);
        prompt = framing ? framedNextTurn(framing, context, added) : [...context, ...added];
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
      contexts.set(request.id, [...prompt, ...(framing ? outputInContext(framing, output) : output)]);
      const prefilled = timings.prompt_n ?? 0;
      if (timings.cache_n !== undefined && prefilled + timings.cache_n !== prompt.length) {
        mismatches.push({ id: request.id, sent: prompt.length, promptN: prefilled, cacheN: timings.cache_n });
      }
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
