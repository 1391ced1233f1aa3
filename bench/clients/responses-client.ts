/** A minimal streaming Responses API client for the benchmark: wall times, usage, function calls. */
import { decodeSseStream } from "../../test/support/sse-decoder.ts";
import { BENCH_KEY } from "./edge-client.ts";

export interface ResponsesTurnResult {
  id: string;
  /** Request sent → `response.completed`/`incomplete`. */
  ms: number;
  /** Request sent → the first output item (the first thing a client can use). */
  firstItemMs: number;
  cache: string;
  /** Prompt tokens (cached included, as the Responses API counts them). */
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  calls: { call_id: string; name: string; arguments: string }[];
}

export async function streamResponse(edgeUrl: string, body: object): Promise<ResponsesTurnResult> {
  const started = performance.now();
  const res = await fetch(`${edgeUrl}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` },
    body: JSON.stringify({ ...body, stream: true }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`edge answered ${res.status}: ${await res.text()}`);
  const result: ResponsesTurnResult = {
    id: "",
    ms: 0,
    firstItemMs: Number.NaN,
    cache: res.headers.get("x-frontier-cache") ?? "",
    inputTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    calls: [],
  };
  for await (const event of decodeSseStream(res.body)) {
    const data = JSON.parse(event.data) as Record<string, unknown>;
    if (event.event === "response.output_item.added" && Number.isNaN(result.firstItemMs)) {
      result.firstItemMs = performance.now() - started;
    } else if (event.event === "response.output_item.done") {
      const item = data.item as { type: string; call_id: string; name: string; arguments: string };
      if (item.type === "function_call") result.calls.push(item);
    } else if (event.event === "response.completed" || event.event === "response.incomplete") {
      const response = data.response as {
        id: string;
        usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number } };
      };
      result.id = response.id;
      result.inputTokens = response.usage.input_tokens;
      result.cachedTokens = response.usage.input_tokens_details.cached_tokens;
      result.outputTokens = response.usage.output_tokens;
    } else if (event.event === "error" || event.event === "response.failed") {
      throw new Error(`stream error: ${event.data}`);
    }
  }
  result.ms = performance.now() - started;
  return result;
}
