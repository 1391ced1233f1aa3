/** The official Anthropic SDK (from npm) against the local stack: JSON, streaming and a tool loop. */
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";

const client = new Anthropic({ baseURL: inject("edgeUrl"), apiKey: LOCAL_API_KEY, maxRetries: 0 });

const weatherTool = {
  name: "get_weather",
  description: "Current weather for a city",
  input_schema: {
    type: "object" as const,
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city"],
  },
};

describe("Anthropic SDK", () => {
  it("creates a message (non-streaming)", async () => {
    const message = await client.messages.create({
      model: "frontier-test",
      max_tokens: 16,
      messages: [{ role: "user", content: "Hello" }],
    });
    expect(message.role).toBe("assistant");
    expect(message.content[0]?.type).toBe("text");
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it("streams a message and assembles the final message", async () => {
    const stream = client.messages.stream({
      model: "frontier-test",
      max_tokens: 16,
      messages: [{ role: "user", content: "Stream a reply" }],
    });
    let deltas = 0;
    stream.on("text", () => deltas++);
    const message = await stream.finalMessage();
    expect(deltas).toBeGreaterThan(0);
    const text = message.content.find((b) => b.type === "text");
    expect(text && "text" in text ? text.text.length : 0).toBeGreaterThan(0);
  });

  it("runs a tool loop: forced call, tool_result, final answer", async () => {
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "What is the weather in Oslo?" }];
    const first = await client.messages.create({
      model: "frontier-test",
      max_tokens: 300,
      tools: [weatherTool],
      tool_choice: { type: "any" },
      messages,
    });
    expect(first.stop_reason).toBe("tool_use");
    const calls = first.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(typeof (call.input as { city: unknown }).city).toBe("string");
    messages.push({ role: "assistant", content: first.content });
    messages.push({
      role: "user",
      content: calls.map((call) => ({ type: "tool_result" as const, tool_use_id: call.id, content: "Sunny, 21 C" })),
    });
    const { data: second, response } = await client.messages
      .create({ model: "frontier-test", max_tokens: 64, tools: [weatherTool], messages })
      .withResponse();
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content.some((b) => b.type === "text")).toBe(true);
    // A live continuation: the whole first turn (prompt + sampled output) is reused; only the
    // suffix (end of turn, tool results, assistant prefix) is prefilled.
    expect(response.headers.get("x-frontier-cache")).toContain("decision=live-tool-ids");
    const firstTurnKv =
      first.usage.input_tokens + (first.usage.cache_read_input_tokens ?? 0) + first.usage.output_tokens;
    expect(second.usage.cache_read_input_tokens).toBe(firstTurnKv);
    expect(second.usage.input_tokens).toBeLessThan(first.usage.input_tokens / 2);
    const reused = second.usage.cache_read_input_tokens ?? 0;
    reportContinuedTurn("tool results", second.usage.input_tokens + reused, reused);
  });

  it("surfaces a 400 as a typed BadRequestError with a request id", async () => {
    const error = await client.messages
      .create({ model: "frontier-test", max_tokens: 0, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).requestID).toMatch(/^req_/);
  });
});
