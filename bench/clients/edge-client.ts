/** A minimal streaming Anthropic client for the benchmark: measures wall time and reads usage. */
import { parseServerTiming } from "../../edge/core/timing.ts";
import { decodeSseStream } from "../../test/support/sse-decoder.ts";

export const BENCH_KEY = "sk-frontier-local";

export interface TurnResult {
  /** Wall time of the whole streamed response (request sent → message_stop). */
  ms: number;
  /** Wall time until the first content block started (the first output the client can use). */
  firstBlockMs: number;
  cache: string;
  /** The edge's `server-timing` steps (ms): route, admit, worker, total. */
  serverTiming: Record<string, number>;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  stopReason: string;
  toolUses: { id: string; name: string; input: string }[];
  /** The assistant content blocks as a client replays them. */
  content: unknown[];
}

interface OpenBlock {
  type: string;
  id?: string;
  name?: string;
  text: string;
  input: string;
  thinking: string;
  signature: string;
}

/** POST a streaming /v1/messages request and read it to the end (message_stop). */
export async function streamTurn(
  edgeUrl: string,
  body: object,
  hint: string,
  extraHeaders: Record<string, string> = {},
): Promise<TurnResult> {
  const started = performance.now();
  const res = await fetch(`${edgeUrl}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": BENCH_KEY,
      "anthropic-version": "2023-06-01",
      "x-claude-code-session-id": hint,
      ...extraHeaders,
    },
    body: JSON.stringify({ ...body, stream: true }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`edge answered ${res.status}: ${await res.text()}`);
  const result: TurnResult = {
    ms: 0,
    firstBlockMs: Number.NaN,
    cache: res.headers.get("x-frontier-cache") ?? "",
    serverTiming: parseServerTiming(res.headers.get("server-timing")),
    inputTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    stopReason: "",
    toolUses: [],
    content: [],
  };
  const blocks: Record<number, OpenBlock> = {};
  const seen: string[] = [];
  let stopped = false;
  for await (const event of decodeSseStream(res.body)) {
    seen.push(event.event);
    if (event.event === "message_stop") stopped = true;
    const data = JSON.parse(event.data) as Record<string, unknown>;
    if (event.event === "content_block_start") {
      if (Number.isNaN(result.firstBlockMs)) result.firstBlockMs = performance.now() - started;
      const block = data.content_block as { type: string; id?: string; name?: string };
      blocks[data.index as number] = { ...block, text: "", input: "", thinking: "", signature: "" };
    } else if (event.event === "content_block_delta") {
      const delta = data.delta as Record<string, string | undefined> & { type: string };
      const block = blocks[data.index as number];
      if (!block) continue;
      if (delta.type === "text_delta") block.text += delta.text ?? "";
      else if (delta.type === "input_json_delta") block.input += delta.partial_json ?? "";
      else if (delta.type === "thinking_delta") block.thinking += delta.thinking ?? "";
      else if (delta.type === "signature_delta") block.signature += delta.signature ?? "";
    } else if (event.event === "message_delta") {
      const usage = data.usage as { input_tokens?: number; cache_read_input_tokens?: number; output_tokens: number };
      result.inputTokens = usage.input_tokens ?? 0;
      result.cachedTokens = usage.cache_read_input_tokens ?? 0;
      result.outputTokens = usage.output_tokens;
      result.stopReason = (data.delta as { stop_reason?: string }).stop_reason ?? "";
    } else if (event.event === "error") {
      throw new Error(`stream error: ${event.data}`);
    }
  }
  result.ms = performance.now() - started;
  if (!stopped) {
    throw new Error(
      `stream ended without message_stop after ${Math.round(result.ms)} ms (x-frontier-cache: ${result.cache || "none"}; events: ${seen.slice(-8).join(", ") || "none"})`,
    );
  }
  for (const [, block] of Object.entries(blocks).sort(([a], [b]) => Number(a) - Number(b))) {
    if (block.type === "tool_use") {
      result.toolUses.push({ id: block.id ?? "", name: block.name ?? "", input: block.input || "{}" });
      result.content.push({ type: "tool_use", id: block.id, name: block.name, input: JSON.parse(block.input || "{}") });
    } else if (block.type === "text") {
      result.content.push({ type: "text", text: block.text });
    } else if (block.type === "thinking") {
      result.content.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
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
