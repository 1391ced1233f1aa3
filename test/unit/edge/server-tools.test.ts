/**
 * The edge's half of hosted tools: declarations, the Anthropic result blocks (sealed hits), and a
 * replayed exchange read back to the exact text the model read — Frontier's own only.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { ownBlobsFor, resolveOwnBlocks } from "../../../edge/protocols/messages/request/foreign-history.ts";
import { toConversation } from "../../../edge/protocols/messages/request/normalize.ts";
import { validateMessagesRequest } from "../../../edge/protocols/messages/request/validate.ts";
import { AnthropicTurn } from "../../../edge/protocols/messages/response/turn.ts";
import { openHit, sealHit } from "../../../edge/server-tools/sealed-hit.ts";
import {
  CacheDecision,
  GenerateEventSchema,
  ServerToolKind,
  StopReason,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId, newSessionId } from "../../../shared/ids.ts";
import { searchResultText } from "../../../shared/server-tool-text.ts";

const keys = { secret: "test-secret-0123456789abcdef", tenant: "tenant-a" };
const hit = { url: "https://example.org/a", title: "A page", pageAge: "2026-01-01", text: "What the model read." };
type EventInit = MessageInitShape<typeof GenerateEventSchema>["event"];
const ev = (event: EventInit) => create(GenerateEventSchema, { event });

describe("hosted tool declarations (Messages)", () => {
  const validate = (tools: unknown[]) =>
    validateMessagesRequest(
      { model: "m", max_tokens: 5, messages: [{ role: "user", content: "hi" }], tools },
      {
        requireMaxTokens: true,
      },
    );

  it("reads web_search / web_fetch into declarations and names other hosted types as not offered", () => {
    const body = validate([
      { type: "web_search_20250305", name: "web_search", max_uses: 3, allowed_domains: ["example.org"] },
      { type: "web_fetch_20250910", name: "web_fetch", max_content_tokens: 500 },
      { type: "bash_20250124", name: "bash" },
      { name: "Read", input_schema: { type: "object" } },
    ]);
    expect(body.tools.map((t) => t.name)).toEqual(["Read"]);
    expect(body.server_tools.map((t) => [t.kind, t.name, t.maxUses, t.allowedDomains, t.maxContentTokens])).toEqual([
      [ServerToolKind.WEB_SEARCH, "web_search", 3, ["example.org"], 0],
      [ServerToolKind.WEB_FETCH, "web_fetch", 0, [], 500],
    ]);
    expect(body.tools_not_offered).toEqual(["bash_20250124"]);
  });

  it("rejects a misnamed hosted tool, both domain lists, and a bad max_uses", () => {
    expect(() => validate([{ type: "web_search_20250305", name: "search" }])).toThrow(ValidationError);
    expect(() =>
      validate([{ type: "web_search_20250305", name: "web_search", allowed_domains: ["a"], blocked_domains: ["b"] }]),
    ).toThrow(/either allowed_domains or blocked_domains/);
    expect(() => validate([{ type: "web_search_20250305", name: "web_search", max_uses: 0 }])).toThrow(/max_uses/);
  });
});

describe("sealed search hits", () => {
  it("open to exactly what was sealed, for the same tenant only; a tampered blob does not open", async () => {
    const blob = await sealHit(keys, hit);
    expect(blob).toMatch(/^frv1\./);
    expect(blob).not.toContain("model read");
    expect(await openHit(keys, blob)).toEqual(hit);
    expect(await openHit({ ...keys, tenant: "tenant-b" }, blob)).toBeUndefined();
    expect(await openHit({ ...keys, secret: "another-secret-0123456789" }, blob)).toBeUndefined();
    const flipped = `${blob.slice(0, 20)}${blob[20] === "A" ? "B" : "A"}${blob.slice(21)}`;
    expect(await openHit(keys, flipped)).toBeUndefined();
  });
});

describe("replayed hosted-tool blocks", () => {
  async function replayedResultText(encrypted: string, tenant = keys.tenant): Promise<string> {
    const id = await mintId(keys.secret, "srvtoolu", keys.tenant, newSessionId());
    const body = validateMessagesRequest(
      {
        model: "m",
        max_tokens: 5,
        messages: [
          { role: "user", content: "search" },
          {
            role: "assistant",
            content: [
              { type: "server_tool_use", id, name: "web_search", input: { query: "q" } },
              {
                type: "web_search_tool_result",
                tool_use_id: id,
                content: [
                  {
                    type: "web_search_result",
                    url: hit.url,
                    title: "shown",
                    page_age: null,
                    encrypted_content: encrypted,
                  },
                ],
              },
            ],
          },
          { role: "user", content: "thanks" },
        ],
      },
      { requireMaxTokens: true },
    );
    const messages = await resolveOwnBlocks(body.messages, ownBlobsFor(keys.secret, tenant));
    const block = toConversation({ ...body, messages }).messages[1]?.content[1]?.block;
    return block?.case === "serverToolResult" ? block.value.text : "";
  }

  it("Frontier's own hit renders the exact text the model read (its sealed URL, title, age and text)", async () => {
    expect(await replayedResultText(await sealHit(keys, hit))).toBe(searchResultText([hit]));
  });

  it("a tampered hit, or one replayed by another tenant, renders only its visible fields, never ciphertext", async () => {
    const blob = await sealHit(keys, hit);
    const visible = searchResultText([{ url: hit.url, title: "shown" }]);
    expect(await replayedResultText(`${blob.slice(0, -2)}${blob.endsWith("AA") ? "BB" : "AA"}`)).toBe(visible);
    expect(await replayedResultText(blob, "tenant-b")).toBe(visible);
  });
});

describe("AnthropicTurn with hosted tools", () => {
  it("streams server_tool_use, the sealed result block and usage.server_tool_use; pause_turn", async () => {
    const turn = new AnthropicTurn("m", "req_1", keys);
    const events = [
      ev({
        case: "prompt",
        value: { promptTokens: 10, cachedTokens: 0, decision: CacheDecision.COLD, messageId: "msg_1" },
      }),
      ev({
        case: "serverToolCall",
        value: { id: "srvtoolu_x", name: "web_search", kind: ServerToolKind.WEB_SEARCH, inputJson: '{"query":"q"}' },
      }),
      ev({
        case: "serverToolResult",
        value: { toolUseId: "srvtoolu_x", kind: ServerToolKind.WEB_SEARCH, hits: [hit] },
      }),
      ev({
        case: "serverToolCall",
        value: { id: "srvtoolu_y", name: "web_search", kind: ServerToolKind.WEB_SEARCH, inputJson: '{"query":"r"}' },
      }),
      ev({
        case: "serverToolResult",
        value: { toolUseId: "srvtoolu_y", kind: ServerToolKind.WEB_SEARCH, errorCode: "max_uses_exceeded" },
      }),
      ev({ case: "stop", value: { reason: StopReason.PAUSE_TURN, usage: { outputTokens: 4, webSearchRequests: 1 } } }),
    ];
    const sse: string[] = [];
    for (const e of events) for (const out of await turn.push(e)) sse.push(out.sse);
    expect(sse.join("")).toContain('"type":"input_json_delta","partial_json":"{\\"query\\":\\"q\\"}"');
    const body = turn.body() as {
      content: Record<string, unknown>[];
      stop_reason: string;
      usage: Record<string, unknown>;
    };
    expect(body.content.map((b) => b.type)).toEqual([
      "server_tool_use",
      "web_search_tool_result",
      "server_tool_use",
      "web_search_tool_result",
    ]);
    expect(body.content[0]).toEqual({
      type: "server_tool_use",
      id: "srvtoolu_x",
      name: "web_search",
      input: { query: "q" },
    });
    const hits = body.content[1]?.content as Record<string, unknown>[];
    expect(hits[0]).toMatchObject({ type: "web_search_result", url: hit.url, title: hit.title, page_age: hit.pageAge });
    expect(await openHit(keys, String(hits[0]?.encrypted_content))).toEqual(hit);
    expect(body.content[3]?.content).toEqual({ type: "web_search_tool_result_error", error_code: "max_uses_exceeded" });
    expect(body.stop_reason).toBe("pause_turn");
    expect(body.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
  });
});
