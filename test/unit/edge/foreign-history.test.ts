/**
 * Histories Frontier did not write, through the real edge pipeline (validate → own-or-foreign →
 * normalise) and every chat family's renderer: readable context, never ciphertext; Frontier's own
 * sealed hits and signed thinking recognised, tampered or foreign ones only context; malformed
 * blocks a 400 naming the field.
 */

import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { ownBlobsFor, resolveOwnBlocks } from "../../../edge/protocols/messages/request/foreign-history.ts";
import { toConversation } from "../../../edge/protocols/messages/request/normalize.ts";
import type { MessagesRequest } from "../../../edge/protocols/messages/request/types.ts";
import { validateMessagesRequest } from "../../../edge/protocols/messages/request/validate.ts";
import { sealHit } from "../../../edge/server-tools/sealed-hit.ts";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../../gpu-worker/chat/select-format.ts";
import type { Conversation } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { signThinking } from "../../../shared/thinking-signature.ts";

const SECRET = "test-secret-0123456789abcdef";
const TENANT = "tenant-a";
/** KB-scale ciphertext, as Anthropic sends per hit. */
const CIPHER = `EqgfCioIARgBIiQ${"x7Qp".repeat(400)}`;
const INDEX = "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNjlm";
const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

function foreignExchange(extra: unknown[] = []) {
  return {
    model: "m",
    max_tokens: 64,
    messages: [
      { role: "user", content: "What is new in Frontier?" },
      {
        role: "assistant",
        content: [
          { type: "redacted_thinking", data: REDACTED },
          { type: "server_tool_use", id: "srvtoolu_01A", name: "web_search", input: { query: "frontier release" } },
          {
            type: "web_search_tool_result",
            tool_use_id: "srvtoolu_01A",
            content: [
              {
                type: "web_search_result",
                url: "https://a.example/x",
                title: "Release notes",
                encrypted_content: CIPHER,
                page_age: "2 days ago",
              },
              { type: "web_search_result", url: "https://b.example/y", title: "Blog", encrypted_content: `${CIPHER}2` },
            ],
          },
          {
            type: "text",
            text: "Frontier shipped hosted tools.",
            citations: [
              {
                type: "web_search_result_location",
                url: "https://a.example/x",
                title: "Release notes",
                encrypted_index: INDEX,
                cited_text: "hosted tools",
              },
            ],
          },
          ...extra,
        ],
      },
      { role: "user", content: "Thanks" },
    ],
  };
}

async function conversationOf(body: unknown, tenant = TENANT): Promise<Conversation> {
  const parsed = validateMessagesRequest(body, { requireMaxTokens: true });
  const request: MessagesRequest = {
    ...parsed,
    messages: await resolveOwnBlocks(parsed.messages, ownBlobsFor(SECRET, tenant)),
  };
  return toConversation(request);
}

function renderAll(conversation: Conversation): string[] {
  return CHAT_FAMILIES.map((family) => createChatFormat(family, { chatTemplate: undefined }).render(conversation).text);
}

function validationError(body: unknown): string {
  try {
    validateMessagesRequest(body, { requireMaxTokens: true });
  } catch (error) {
    if (error instanceof ValidationError) return error.message;
    throw error;
  }
  throw new Error("expected a validation error");
}

describe("foreign Messages history", () => {
  it("renders a foreign search exchange as title/url/age in every family, never its ciphertext", async () => {
    const conversation = await conversationOf(foreignExchange());
    const blocks = conversation.messages[1]?.content.map((c) => c.block);
    expect(blocks?.map((b) => b?.case)).toEqual(["opaque", "serverToolUse", "serverToolResult", "text"]);
    expect(blocks?.[2]).toMatchObject({
      case: "serverToolResult",
      value: {
        toolUseId: "srvtoolu_01A",
        text: "[1] Release notes\nURL: https://a.example/x\nAge: 2 days ago\n\n[2] Blog\nURL: https://b.example/y",
      },
    });
    for (const rendered of renderAll(conversation)) {
      expect(rendered).toContain("URL: https://a.example/x");
      expect(rendered).toContain("Frontier shipped hosted tools.");
      expect(rendered).toContain("[redacted thinking]");
      expect(rendered).not.toContain("x7Qpx7Qp");
      expect(rendered).not.toContain(INDEX);
      expect(rendered).not.toContain(REDACTED);
    }
  });

  it("keeps redacted_thinking's JSON verbatim and its data as the anchor, out of the prompt", async () => {
    const conversation = await conversationOf(foreignExchange());
    expect(conversation.messages[1]?.content[0]?.block).toMatchObject({
      case: "opaque",
      value: {
        type: "redacted_thinking",
        json: JSON.stringify({ type: "redacted_thinking", data: REDACTED }),
        text: "[redacted thinking]",
        anchor: REDACTED,
      },
    });
  });

  it("reads Frontier's own sealed hit; a tampered blob or another tenant's is foreign (title/url only)", async () => {
    // What Frontier seals for a hit it served: the JSON of what the model read (edge/server-tools/sealed-hit.ts).
    const sealed = await sealHit(
      { secret: SECRET, tenant: TENANT },
      {
        url: "https://a.example/x",
        title: "Release notes",
        pageAge: "2 days ago",
        text: "Hosted web_search landed in v2.",
      },
    );
    // A character inside the ciphertext (the last one may carry only padding bits).
    const at = Math.floor(sealed.length / 2);
    const tampered = sealed.slice(0, at) + (sealed[at] === "A" ? "B" : "A") + sealed.slice(at + 1);
    const body = foreignExchange();
    const result = body.messages[1]?.content[2] as { content: { encrypted_content: string }[] };
    const hits = result.content;
    const [first, second] = hits;
    if (!first || !second) throw new Error("fixture");
    first.encrypted_content = sealed;
    second.encrypted_content = tampered;
    const own = await conversationOf(body);
    const text = (c: Conversation) => {
      const b = c.messages[1]?.content[2]?.block;
      return b?.case === "serverToolResult" ? b.value.text : "";
    };
    expect(text(own)).toBe(
      "[1] Release notes\nURL: https://a.example/x\nAge: 2 days ago\nHosted web_search landed in v2.\n\n[2] Blog\nURL: https://b.example/y",
    );
    expect(text(await conversationOf(body, "tenant-b"))).not.toContain("Hosted web_search landed");
  });

  it("treats thinking as Frontier's only when its signature verifies for this tenant", async () => {
    const signature = await signThinking(SECRET, TENANT, "plan the search");
    const blocks = async (thinking: string, sig: string, tenant = TENANT) => {
      const c = await conversationOf(foreignExchange([{ type: "thinking", thinking, signature: sig }]), tenant);
      return c.messages[1]?.content.at(-1)?.block;
    };
    expect(await blocks("plan the search", signature)).toMatchObject({ case: "thinking", value: { signature } });
    for (const foreign of [
      await blocks("plan the search", "EqMBCkYIBxgCKkDforeign"),
      await blocks("plan the other search", signature),
      await blocks("plan the search", signature, "tenant-b"),
    ]) {
      expect(foreign?.case).toBe("opaque");
      if (foreign?.case !== "opaque") continue;
      expect(foreign.value.text).toMatch(/^\[thinking from another model\] plan the/);
      expect(foreign.value.type).toBe("thinking");
    }
  });

  it("renders a web_fetch result's visible text, and tool errors in the shared error form", async () => {
    const conversation = await conversationOf(
      foreignExchange([
        { type: "server_tool_use", id: "srvtoolu_02", name: "web_fetch", input: { url: "https://a.example/x" } },
        {
          type: "web_fetch_tool_result",
          tool_use_id: "srvtoolu_02",
          content: {
            type: "web_fetch_result",
            url: "https://a.example/x",
            retrieved_at: "2026-11-30T10:00:00Z",
            content: {
              type: "document",
              title: "Release notes",
              source: { type: "text", media_type: "text/plain", data: "Full notes." },
            },
          },
        },
        { type: "server_tool_use", id: "srvtoolu_03", name: "web_search", input: { query: "more" } },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_03",
          content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" },
        },
      ]),
    );
    const results = conversation.messages[1]?.content.flatMap((c) =>
      c.block.case === "serverToolResult" ? [c.block.value] : [],
    );
    expect(results?.[1]).toMatchObject({
      type: "web_fetch_tool_result",
      text: "URL: https://a.example/x\nTitle: Release notes\nRetrieved: 2026-11-30T10:00:00Z\n\nFull notes.",
      isError: false,
    });
    expect(results?.[2]).toMatchObject({ text: "[error] max_uses_exceeded", isError: true });
  });

  it("answers a malformed foreign block with a validation error naming the field", () => {
    const broken = (block: unknown) => {
      const body = foreignExchange();
      const content = body.messages[1]?.content;
      if (Array.isArray(content)) content.splice(1, 2, block as never);
      return validationError(body);
    };
    expect(broken({ type: "server_tool_use", name: "web_search", input: {} })).toBe(
      "messages.1.content.1.id: Field required",
    );
    expect(
      broken({
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_1",
        content: [{ type: "web_search_result", title: "t", encrypted_content: "e" }],
      }),
    ).toBe("messages.1.content.1.content.0.url: Field required");
    expect(broken({ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: "nope" })).toBe(
      "messages.1.content.1.content: Input should be a valid list or an error object",
    );
    expect(broken({ type: "web_fetch_tool_result", tool_use_id: "s", content: { type: "web_fetch_tool_error" } })).toBe(
      "messages.1.content.1.content.error_code: Field required",
    );
    expect(broken({ type: "redacted_thinking" })).toBe("messages.1.content.1.data: Field required");
    expect(broken({ type: "text", text: "x", citations: "none" })).toBe(
      "messages.1.content.1.citations: Input should be a valid list",
    );
  });
});
