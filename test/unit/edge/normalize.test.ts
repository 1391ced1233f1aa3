import { describe, expect, it } from "vitest";
import { flattenToolResult, toGenerateRequest } from "../../../edge/protocols/messages/request/normalize.ts";
import { validateMessagesRequest } from "../../../edge/protocols/messages/request/validate.ts";
import { Role, ThinkingMode, ToolChoiceMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

describe("normalize", () => {
  it("maps a request onto the proto conversation", () => {
    const body = validateMessagesRequest(
      {
        model: "m",
        max_tokens: 100,
        temperature: 0.5,
        top_k: 40,
        stop_sequences: ["END"],
        system: "sys",
        thinking: { type: "enabled", budget_tokens: 2048 },
        tool_choice: { type: "tool", name: "Bash", disable_parallel_tool_use: true },
        tools: [{ name: "Bash", input_schema: { type: "object", properties: { command: { type: "string" } } } }],
        messages: [
          { role: "system", content: "note" },
          { role: "user", content: "go" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "Bash", input: { command: "ls" } }] },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_x",
                is_error: true,
                content: [
                  { type: "text", text: "a" },
                  { type: "image", source: {} },
                  { type: "text", text: "b" },
                ],
              },
              {
                type: "web_search_tool_result",
                tool_use_id: "srvtoolu_1",
                content: [{ type: "web_search_result", url: "https://a.example", title: "A", encrypted_content: "E" }],
              },
            ],
          },
        ],
      },
      { requireMaxTokens: true },
    );
    const request = toGenerateRequest(body, { requestId: "req_1", tenantId: "t", sessionId: "s", epoch: 3 });
    expect(request.idKinds).toMatchObject({ message: "msg", toolCall: "toolu" });
    expect(request.epoch).toBe(3n);
    const conversation = request.conversation;
    expect(conversation?.system).toEqual(["sys"]);
    expect(conversation?.messages.map((m) => m.role)).toEqual([Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.USER]);
    expect(conversation?.messages[2]?.content[0]?.block).toMatchObject({
      case: "toolUse",
      value: { id: "toolu_x", name: "Bash", inputJson: '{"command":"ls"}' },
    });
    expect(conversation?.messages[3]?.content[0]?.block).toMatchObject({
      case: "toolResult",
      value: { toolUseId: "toolu_x", content: "a\n[image omitted]\nb", isError: true },
    });
    expect(conversation?.messages[3]?.content[1]?.block).toMatchObject({
      case: "serverToolResult",
      value: { toolUseId: "srvtoolu_1", type: "web_search_tool_result", text: "[1] A\nURL: https://a.example" },
    });
    expect(conversation?.tools[0]?.inputSchemaJson).toBe(
      '{"type":"object","properties":{"command":{"type":"string"}}}',
    );
    expect(conversation?.toolChoice).toMatchObject({
      mode: ToolChoiceMode.TOOL,
      name: "Bash",
      disableParallelToolUse: true,
    });
    expect(conversation?.thinking).toMatchObject({ mode: ThinkingMode.ENABLED, budgetTokens: 2048 });
    expect(request.sampling).toMatchObject({ maxTokens: 100, temperature: 0.5, topK: 40, stopSequences: ["END"] });
    expect(request.sampling?.topP).toBeUndefined();
  });

  it("flattens tool results", () => {
    expect(flattenToolResult("plain")).toBe("plain");
    expect(flattenToolResult([{ type: "other", kind: "document" }])).toBe("[document omitted]");
  });
});
