/**
 * One fleet agent's first turn against llama-server: the same system prompt, tools and first message
 * as chat messages (the ChatML/Hermes rendering of the peer comparison, bench/peer/peer-llama-server.ts),
 * streamed through `/v1/chat/completions` with its prompt cache on; prefilled and reused tokens from
 * the server's `timings` (prompt_n, cache_n). Output: as many tokens as Frontier's turn asks for, under
 * a lowercase grammar (its chat parser fails the random model's raw bytes).
 */
import { decodeSseStream } from "../../../test/support/sse-decoder.ts";
import { chatMessages } from "../../peer/peer-llama-server.ts";
import type { FleetAgent } from "./fleet-agents.ts";
import type { FleetTurn } from "./fleet-report.ts";

export async function llamaServerTurn(url: string, agent: FleetAgent): Promise<FleetTurn> {
  const { system, tools, messages, max_tokens } = agent.body;
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "peer",
      messages: chatMessages({ agent: agent.name, system, tools, turns: [] }, messages),
      max_tokens,
      ignore_eos: true,
      cache_prompt: true,
      grammar: "root ::= [a-z ]*",
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`llama-server answered ${res.status}: ${await res.text()}`);
  let ttftMs = Number.NaN;
  let timings: { prompt_n?: number; cache_n?: number } | undefined;
  for await (const event of decodeSseStream(res.body)) {
    if (event.data === "[DONE]") break;
    const data = JSON.parse(event.data) as {
      choices?: { delta?: { content?: string | null } }[];
      timings?: { prompt_n?: number; cache_n?: number };
      error?: { message?: string };
    };
    if (data.error) throw new Error(`llama-server stream error: ${data.error.message}`);
    if (Number.isNaN(ttftMs) && data.choices?.some((c) => (c.delta?.content ?? "") !== "")) {
      ttftMs = performance.now() - started;
    }
    if (data.timings) timings = data.timings;
  }
  if (!timings) throw new Error("llama-server sent no timings");
  const prefilled = timings.prompt_n ?? 0;
  const cached = timings.cache_n ?? 0;
  return {
    agent: agent.name,
    tenant: agent.tenant,
    index: agent.index,
    decision: cached > 0 ? "cache" : "cold",
    prompt: prefilled + cached,
    cached,
    prefilled,
    ttftMs: Number.isNaN(ttftMs) ? performance.now() - started : ttftMs,
    unique: undefined,
  };
}
