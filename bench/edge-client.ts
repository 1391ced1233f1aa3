/** A minimal streaming Anthropic client for the benchmark: measures wall time and reads usage. */
import { decodeSseStream } from "../shared/sse-decoder.ts";

export const BENCH_KEY = "sk-frontier-local";

export interface TurnResult {
  ms: number;
  cache: string;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  toolUses: { id: string; name: string; input: string }[];
  content: unknown[];
}

/** POST a streaming /v1/messages request and read it to the end (message_stop). */
export async function streamTurn(edgeUrl: string, body: object, hint: string): Promise<TurnResult> {
  const started = performance.now();
  const res = await fetch(`${edgeUrl}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": BENCH_KEY,
      "anthropic-version": "2023-06-01",
      "x-claude-code-session-id": hint,
    },
    body: JSON.stringify({ ...body, stream: true }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`edge answered ${res.status}: ${await res.text()}`);
  const result: TurnResult = {
    ms: 0,
    cache: res.headers.get("x-frontier-cache") ?? "",
    inputTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    toolUses: [],
    content: [],
  };
  const blocks: Record<number, { type: string; id?: string; name?: string; text?: string; input?: string }> = {};
  for await (const event of decodeSseStream(res.body)) {
    const data = JSON.parse(event.data) as Record<string, unknown>;
    if (event.event === "content_block_start") {
      const block = data.content_block as { type: string; id?: string; name?: string };
      blocks[data.index as number] = { ...block, text: "", input: "" };
    } else if (event.event === "content_block_delta") {
      const delta = data.delta as { type: string; text?: string; partial_json?: string };
      const block = blocks[data.index as number];
      if (block && delta.type === "text_delta") block.text += delta.text ?? "";
      if (block && delta.type === "input_json_delta") block.input += delta.partial_json ?? "";
    } else if (event.event === "message_delta") {
      const usage = data.usage as { input_tokens?: number; cache_read_input_tokens?: number; output_tokens: number };
      result.inputTokens = usage.input_tokens ?? 0;
      result.cachedTokens = usage.cache_read_input_tokens ?? 0;
      result.outputTokens = usage.output_tokens;
    } else if (event.event === "error") {
      throw new Error(`stream error: ${event.data}`);
    }
  }
  result.ms = performance.now() - started;
  for (const block of Object.values(blocks)) {
    if (block.type === "tool_use") {
      result.toolUses.push({ id: block.id ?? "", name: block.name ?? "", input: block.input || "{}" });
      result.content.push({ type: "tool_use", id: block.id, name: block.name, input: JSON.parse(block.input || "{}") });
    } else if (block.type === "text") {
      result.content.push({ type: "text", text: block.text });
    }
  }
  return result;
}

/** Tokens of a request as the worker renders it (POST /v1/messages/count_tokens). */
export async function countTokens(edgeUrl: string, body: object): Promise<number> {
  const res = await fetch(`${edgeUrl}/v1/messages/count_tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": BENCH_KEY, "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`count_tokens answered ${res.status}`);
  return ((await res.json()) as { input_tokens: number }).input_tokens;
}
