/** Responses items Frontier did not make: web_search_call and foreign encrypted reasoning, as readable context. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { sealReasoning, unsealReasoningItems } from "../../../edge/protocols/responses/request/encrypted-reasoning.ts";
import { toConversation } from "../../../edge/protocols/responses/request/normalize.ts";
import { collectResponsesRoutingIds } from "../../../edge/protocols/responses/request/routing-ids.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../../gpu-worker/chat/select-format.ts";
import { Role } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const SECRET = "test-secret-0123456789abcdef";
const FOREIGN_BLOB = `gAAAAABp${"Zq9r".repeat(300)}`;
const searchCall = {
  type: "web_search_call",
  id: "ws_68a1",
  status: "completed",
  action: { type: "search", query: "frontier release", sources: [{ type: "url", url: "https://a.example/x" }] },
};

function request(input: unknown[]) {
  return validateResponsesRequest({ model: "m", input, tools: [{ type: "function", name: "lookup", parameters: {} }] });
}

describe("foreign Responses items", () => {
  it("render a web_search_call and foreign reasoning readably in every family, never the ciphertext", async () => {
    const own = await sealReasoning(SECRET, "t", "my own plan");
    const body = request([
      { role: "user", content: "What is new?" },
      {
        type: "reasoning",
        id: "rs_x",
        summary: [{ type: "summary_text", text: "think about it" }],
        encrypted_content: FOREIGN_BLOB,
      },
      searchCall,
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hosted tools." }] },
      { role: "user", content: "More?" },
      { type: "reasoning", id: "rs_y", summary: [], encrypted_content: own },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "No." }] },
      { role: "user", content: "Ok" },
    ]);
    const items = await unsealReasoningItems(SECRET, "t", body.input);
    const conversation = toConversation(body, items);
    const turn = conversation.messages[1];
    expect(turn?.role).toBe(Role.ASSISTANT);
    expect(turn?.content.map((c) => c.block.case)).toEqual(["opaque", "serverToolUse", "serverToolResult", "text"]);
    expect(turn?.content[1]?.block).toMatchObject({
      value: { id: "ws_68a1", name: "web_search", inputJson: '{"query":"frontier release"}' },
    });
    expect(turn?.content[2]?.block).toMatchObject({
      value: { toolUseId: "ws_68a1", text: "[1] https://a.example/x\nURL: https://a.example/x" },
    });
    expect(turn?.content[0]?.block).toMatchObject({
      value: { text: "[reasoning from another model] think about it", anchor: FOREIGN_BLOB },
    });
    expect(conversation.messages[3]?.content[0]?.block).toMatchObject({
      case: "thinking",
      value: { thinking: "my own plan" },
    });
    for (const family of CHAT_FAMILIES) {
      const rendered = createChatFormat(family, { chatTemplate: undefined }).render(conversation).text;
      expect(rendered).toContain("frontier release");
      expect(rendered).toContain("[reasoning from another model] think about it");
      expect(rendered).not.toContain("Zq9rZq9r");
    }
  });

  it("keep the client's web_search_call item verbatim and out of the routing IDs", () => {
    const body = request([{ role: "user", content: "q" }, searchCall, { role: "user", content: "again" }]);
    const item = body.input[1];
    expect(item).toMatchObject({ type: "web_search_call", json: JSON.stringify(searchCall) });
    expect(collectResponsesRoutingIds(body.input).replayed).toEqual([]);
  });

  it("answer a malformed web_search_call with a validation error naming the field", () => {
    const error = (item: unknown) => {
      try {
        request([{ role: "user", content: "q" }, item]);
      } catch (e) {
        if (e instanceof ValidationError) return e.message;
        throw e;
      }
      return "no error";
    };
    expect(error({ type: "web_search_call", action: { type: "search", query: "x" } })).toBe(
      "input.1.id: Field required",
    );
    expect(error({ ...searchCall, action: { type: "search" } })).toBe("input.1.action.query: Field required");
    expect(error({ ...searchCall, action: { type: "search", query: "x", sources: [{ type: "url" }] } })).toBe(
      "input.1.action.sources.0.url: Field required",
    );
  });
});
