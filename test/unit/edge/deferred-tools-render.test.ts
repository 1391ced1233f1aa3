/**
 * The rendered prompt of a deferred-tool conversation, in every chat family: the deferred tool is
 * absent until a tool_reference loads it, and loading it appends (the earlier prompt is a byte
 * prefix of the later one), since its definition renders inside the tool result.
 */
import { describe, expect, it } from "vitest";
import { toConversation } from "../../../edge/protocols/messages/request/normalize.ts";
import { validateMessagesRequest } from "../../../edge/protocols/messages/request/validate.ts";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../../gpu-worker/chat/select-format.ts";

const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const tools = [
  { name: "ToolSearch", description: "Loads deferred tools", input_schema: { type: "object", properties: {} } },
  { name: "get_weather", description: "Weather for a city", input_schema: schema, defer_loading: true },
];
const user = { role: "user", content: "weather in Paris?" };
const call = { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: {} }] };
const result = {
  role: "user",
  content: [
    { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: "get_weather" }] },
  ],
};

const conversation = (messages: unknown[], toolList: unknown[] = tools) =>
  toConversation(
    validateMessagesRequest({ model: "m", max_tokens: 8, tools: toolList, messages }, { requireMaxTokens: true }),
  );

describe.each(CHAT_FAMILIES)("deferred tools rendered by %s", (family) => {
  const format = createChatFormat(family, { chatTemplate: undefined });

  it("leaves the deferred tool out of the prompt until referenced, then appends its definition", () => {
    const before = format.render(conversation([user, call]));
    expect(before.text).not.toContain("get_weather");
    const after = format.render(conversation([user, call, result]));
    const historyBefore = before.text.slice(0, before.generationPrefixStart);
    expect(after.text.startsWith(historyBefore)).toBe(true);
    const loadedAt = after.text.indexOf("get_weather");
    expect(loadedAt).toBeGreaterThanOrEqual(historyBefore.length);
    expect(after.text).toContain("Weather for a city");
  });

  it("lets a forced call name the referenced tool", () => {
    const loaded = conversation([user, call, result]);
    const grammar = format.toolCallGrammar({
      tools: [...loaded.tools, ...loaded.referencedTools],
      choice: { name: "get_weather" },
      parallel: false,
      minCalls: 1,
      thinkingOpen: false,
    });
    expect(grammar).toContain("get_weather");
  });
});
