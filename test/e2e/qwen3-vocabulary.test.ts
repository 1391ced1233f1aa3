/**
 * The agent loops again, on the second stack: a worker serving the Qwen3-vocabulary model (real
 * BPE vocabulary, merges and special tokens; format `qwen3` recognised from its chat template).
 * Claude Code's Bash loop, the Anthropic SDK's tool loop and the OpenAI SDK's Responses loop: every
 * turn after the first prefills only its suffix (usage, the cache header, the worker's log).
 */

import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { Response as OpenAiResponse } from "openai/resources/responses/responses";
import { describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";
import { expectBashLoop, expectSuffixOnlyAfterFirst } from "../support/claude-cli.ts";

const edgeUrl = inject("familyEdgeUrl");
const logFile = inject("familyWorkerLogFile");
const logSince = (from: number) => readFileSync(logFile, "utf8").slice(from);
const logLength = () => readFileSync(logFile, "utf8").length;
/**
 * The most new tokens a turn of `results` tool results may prefill: the random model makes one call or
 * more, and each result adds its own framing (measured: 13 + 12 per result). A turn that lost
 * the live KV prefills the whole prompt: over 200 tokens (the first prompt alone is 157).
 */
const suffixBound = (results: number) => 20 + 16 * results;

describe("on the Qwen3-vocabulary model", () => {
  it("the worker serves it in the qwen3 chat format", () => {
    const ready = readFileSync(logFile, "utf8")
      .split("\n")
      .find((l) => l.includes(" worker ready "));
    expect(ready).toMatch(/ model=frontier-qwen3-tiny /);
    expect(ready).toMatch(/ format=qwen3 /);
  });

  it("Claude Code: the two-call Bash loop, every turn after the first a live continuation", async () => {
    await expectBashLoop(edgeUrl, logFile);
  });

  it("Anthropic SDK: forced call, tool_result by ID, answer; the second turn prefills only the suffix", async () => {
    const client = new Anthropic({ baseURL: edgeUrl, apiKey: LOCAL_API_KEY, maxRetries: 0 });
    const from = logLength();
    const tool = {
      name: "get_weather",
      description: "Current weather for a city",
      input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
    };
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "What is the weather in Oslo?" }];
    const first = await client.messages.create({
      model: "frontier-test",
      max_tokens: 200,
      tools: [tool],
      tool_choice: { type: "any" },
      messages,
    });
    expect(first.stop_reason).toBe("tool_use");
    const calls = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    expect(calls.length).toBeGreaterThan(0);
    messages.push({ role: "assistant", content: first.content });
    messages.push({
      role: "user",
      content: calls.map((c) => ({ type: "tool_result" as const, tool_use_id: c.id, content: "Sunny, 21 C" })),
    });
    const { data: second, response } = await client.messages
      .create({ model: "frontier-test", max_tokens: 48, tools: [tool], messages })
      .withResponse();
    expect(second.stop_reason).toBe("end_turn");
    expect(response.headers.get("x-frontier-cache")).toContain("decision=live-tool-ids");
    const firstKv = first.usage.input_tokens + (first.usage.cache_read_input_tokens ?? 0) + first.usage.output_tokens;
    expect(second.usage.cache_read_input_tokens).toBe(firstKv);
    expect(second.usage.input_tokens).toBeGreaterThan(0);
    expect(second.usage.input_tokens).toBeLessThan(suffixBound(calls.length));
    expectSuffixOnlyAfterFirst(logSince(from), calls.length);
  });

  it("OpenAI SDK: a Responses loop by previous_response_id, each later turn suffix-only", async () => {
    const client = new OpenAI({ baseURL: `${edgeUrl}/v1`, apiKey: LOCAL_API_KEY, maxRetries: 0 });
    const from = logLength();
    const lookup = {
      type: "function" as const,
      name: "lookup",
      description: "Look a word up",
      parameters: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
      strict: false,
    };
    const common = { model: "frontier-test", instructions: "You are a dictionary agent.", tools: [lookup] };
    const kvAfter = (r: OpenAiResponse) => (r.usage?.input_tokens ?? 0) + (r.usage?.output_tokens ?? 0);
    const cached = (r: OpenAiResponse) => r.usage?.input_tokens_details.cached_tokens ?? 0;
    const first = await client.responses.create({
      ...common,
      input: "Look up a word please.",
      tool_choice: "required",
      max_output_tokens: 200,
    });
    const calls = first.output.filter((item) => item.type === "function_call");
    expect(calls.length).toBeGreaterThan(0);
    const second = await client.responses.create({
      ...common,
      previous_response_id: first.id,
      input: calls.map((c) => ({ type: "function_call_output" as const, call_id: c.call_id, output: "a word" })),
      tool_choice: "none",
      max_output_tokens: 12,
    });
    expect(cached(second)).toBe(kvAfter(first));
    expect((second.usage?.input_tokens ?? 0) - cached(second)).toBeLessThan(suffixBound(calls.length));
    const third = await client.responses.create({
      ...common,
      previous_response_id: second.id,
      input: "Thanks. One more sentence.",
      max_output_tokens: 8,
    });
    // A turn cut by max tokens sampled its last token without feeding it: all but that one is reused.
    expect(cached(third)).toBeGreaterThanOrEqual(kvAfter(second) - 1);
    expect((third.usage?.input_tokens ?? 0) - cached(third)).toBeLessThan(40);
    const log = logSince(from);
    expect(log).toContain(`match=tool-output-ids ids=${calls.length}`);
    expect(log).toMatch(/match=live-(text|token)-prefix/);
  });
});
