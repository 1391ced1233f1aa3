/**
 * The official OpenAI SDK (from npm) against the local stack's Chat Completions API: a tool loop
 * whose second turn (the assistant turn replayed, tool messages answering by `tool_call_id`)
 * prefills only the suffix, proved by `usage.prompt_tokens_details.cached_tokens` and the cache
 * header; streaming with the SDK's own accumulator; and OpenAI's error shape.
 */
import OpenAI from "openai";
import type {
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from "openai/resources/chat/completions";
import { describe, expect, inject, it } from "vitest";
import { verifyId } from "../../shared/ids.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";

const DEV_ID_SECRET = "frontier-dev-id-secret-change-me";
const client = new OpenAI({ baseURL: `${inject("edgeUrl")}/v1`, apiKey: LOCAL_API_KEY, maxRetries: 0 });

const lookup = {
  type: "function" as const,
  function: {
    name: "lookup",
    description: "Look a word up",
    parameters: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
  },
};

const kvAfter = (c: ChatCompletion) => (c.usage?.prompt_tokens ?? 0) + (c.usage?.completion_tokens ?? 0);
const cachedOf = (c: ChatCompletion) => c.usage?.prompt_tokens_details?.cached_tokens ?? 0;
const functionCalls = (c: ChatCompletion) =>
  (c.choices[0]?.message.tool_calls ?? []).filter(
    (call): call is Extract<ChatCompletionMessageToolCall, { type: "function" }> => call.type === "function",
  );

const system: ChatCompletionMessageParam = { role: "system", content: "You are a dictionary agent." };
const user: ChatCompletionMessageParam = { role: "user", content: "Look up two words please." };

describe("OpenAI Chat Completions through the openai SDK", () => {
  it("continues a tool loop by tool_call_id, prefilling only the suffix", async () => {
    const { data: first, response: firstRaw } = await client.chat.completions
      .create({
        model: "frontier-test",
        messages: [system, user],
        tools: [lookup],
        tool_choice: "required",
        temperature: 0,
        max_completion_tokens: 200,
      })
      .withResponse();
    expect(firstRaw.headers.get("x-request-id")).toMatch(/^req_/);
    expect(first.id).toMatch(/^chatcmpl-/);
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    const calls = functionCalls(first);
    expect(calls.length).toBeGreaterThan(0);
    const session = (await verifyId(DEV_ID_SECRET, first.id, "local"))?.session;
    for (const call of calls) {
      expect(await verifyId(DEV_ID_SECRET, call.id, "local")).toEqual({ kind: "call", session });
      expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    }
    // A first turn starts cold or from a prefix another conversation of the tenant shares (the same
    // system and tools: docs/operations/shared-prefixes.md), never from all of its input.
    expect(cachedOf(first)).toBeLessThan(first.usage?.prompt_tokens ?? 0);

    const assistant = first.choices[0]?.message;
    if (!assistant) throw new Error("no message");
    // The tools finish in reverse order; the client replays the assistant turn as it got it.
    const results: ChatCompletionMessageParam[] = [...calls]
      .reverse()
      .map((call) => ({ role: "tool", tool_call_id: call.id, content: `meaning of ${call.function.name}` }));
    const { data: second, response: secondRaw } = await client.chat.completions
      .create({
        model: "frontier-test",
        messages: [system, user, assistant, ...results],
        tools: [lookup],
        temperature: 0,
        max_completion_tokens: 8,
      })
      .withResponse();
    expect(secondRaw.headers.get("x-frontier-cache")).toContain("decision=live-tool-ids");
    expect(secondRaw.headers.get("x-frontier-route")).toBe("tool-result; epoch=1");
    // Everything the first turn left in the KV is reused (its last sampled token may not be in it yet).
    expect(cachedOf(second)).toBeGreaterThanOrEqual(kvAfter(first) - 1);
    expect(cachedOf(second)).toBeLessThanOrEqual(kvAfter(first));
    const suffix = (second.usage?.prompt_tokens ?? 0) - cachedOf(second);
    expect(suffix).toBeGreaterThan(0);
    expect(suffix).toBeLessThan(60 * results.length);
    console.log(
      `chat tool loop: turn 1 prompt=${first.usage?.prompt_tokens} completion=${first.usage?.completion_tokens}; turn 2 prompt=${second.usage?.prompt_tokens} cached=${cachedOf(second)} prefilled=${suffix}`,
    );
    reportContinuedTurn("tool messages", second.usage?.prompt_tokens ?? 0, cachedOf(second));
  });

  it("streams chunks the SDK accumulates, with usage last when asked", async () => {
    const stream = client.chat.completions.stream({
      model: "frontier-test",
      messages: [system, user],
      tools: [lookup],
      tool_choice: { type: "function", function: { name: "lookup" } },
      parallel_tool_calls: false,
      max_tokens: 200,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    stream.on("chunk", (chunk) => chunks.push(chunk));
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    const calls = functionCalls(completion);
    expect(calls.map((c) => c.function.name)).toEqual(["lookup"]);
    expect(JSON.parse(calls[0]?.function.arguments ?? "")).toHaveProperty("word");
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("answers what it does not serve with a 400 in OpenAI's shape naming the field", async () => {
    const failure = await client.chat.completions
      .create({ model: "frontier-test", messages: [user], n: 2 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure).toMatchObject({ status: 400, param: "n", type: "invalid_request_error" });

    const orphan = await client.chat.completions
      .create({
        model: "frontier-test",
        messages: [user, { role: "tool", tool_call_id: "call_unknown", content: "x" }],
      })
      .catch((error: unknown) => error);
    expect(orphan).toBeInstanceOf(OpenAI.BadRequestError);
    expect(orphan).toMatchObject({ status: 400, code: "unknown_tool_call_id" });
  });
});
