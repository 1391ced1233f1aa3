/**
 * Remote compaction on the real stack (wrangler dev + a worker process on the generated model):
 * a Responses turn, then POST /v1/responses/compact on it (the summary turn continues the live
 * session), then a follow-up that carries the compaction item instead of the history: its prompt holds
 * the summary (the same token count as the same text sent as a plain user message) and it is a new
 * prefix (not a live continuation); the turn after it continues live again, and another tenant
 * cannot use the item.
 */
import { describe, expect, inject, it } from "vitest";
import { compactionText, openCompaction } from "../../edge/protocols/responses/request/compaction-items.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { LOCAL_API_KEY, OTHER_TENANT_API_KEY } from "../support/api.ts";

const edge = inject("edgeUrl");
const INSTRUCTIONS = "You are a careful assistant.";
const LOOKUP = {
  type: "function",
  name: "lookup",
  description: "Look a word up",
  parameters: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};

/** POST /v1/responses/compact's answer (edge/protocols/responses/compact/handler.ts). */
interface CompactionResponse {
  object: string;
  output: ({ type: "message" } | { type: "compaction"; encrypted_content: string })[];
  usage: Turn["usage"] | null;
}

interface Turn {
  id: string;
  status: string;
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number };
}

async function post<T>(path: string, body: Record<string, unknown>, key = LOCAL_API_KEY) {
  const response = await fetch(`${edge}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "frontier-test", instructions: INSTRUCTIONS, tools: [LOOKUP], ...body }),
  });
  return { response, cache: response.headers.get("x-frontier-cache") ?? "", json: (await response.json()) as T };
}

const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

describe("remote compaction on the real stack", () => {
  it("compacts a live conversation, renders the summary in the follow-up, and continues live after it", async () => {
    const first = await post<Turn>("/v1/responses", {
      input: [user("Remember the number 41 and the word brook.")],
      max_output_tokens: 12,
      temperature: 0,
      store: true,
    });
    expect(first.response.status).toBe(200);

    const compacted = await post<CompactionResponse>("/v1/responses/compact", {
      previous_response_id: first.json.id,
      max_output_tokens: 24,
      temperature: 0,
    });
    expect(compacted.response.status).toBe(200);
    expect(compacted.json.object).toBe("response.compaction");
    // The summary turn continued the first turn's live KV: only the summary request was prefilled.
    expect(compacted.cache).toMatch(/decision=live-/);
    expect(compacted.json.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
      first.json.usage.input_tokens + first.json.usage.output_tokens - 1,
    );
    const item = compacted.json.output.at(-1);
    if (item?.type !== "compaction") throw new Error("no compaction item");
    const summary = await openCompaction(DEV_ID_SECRET, "local", item.encrypted_content);
    expect(summary).toBeDefined();

    // The follow-up carries the compacted history instead of the conversation: a new prefix.
    const followUp = await post<Turn>("/v1/responses", {
      input: [...compacted.json.output, user("What was the number?")],
      max_output_tokens: 8,
      temperature: 0,
      store: true,
    });
    expect(followUp.response.status).toBe(200);
    expect(followUp.cache).not.toMatch(/decision=live-/);

    // The turn after it continues live from the follow-up's KV.
    const next = await post<Turn>("/v1/responses", {
      previous_response_id: followUp.json.id,
      input: [user("And the word?")],
      max_output_tokens: 8,
      temperature: 0,
      store: false,
    });
    expect(next.response.status).toBe(200);
    expect(next.cache).toMatch(/decision=live-/);
    const followUpKv = followUp.json.usage.input_tokens + followUp.json.usage.output_tokens;
    expect(next.json.usage.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(followUpKv - 1);

    // The follow-up's prompt held the summary: the same conversation with the summary sent as plain
    // text has exactly its prompt size, and without the summary it is smaller.
    const asText = (withSummary: boolean) =>
      post<Turn>("/v1/responses", {
        input: [
          user("Remember the number 41 and the word brook."),
          ...(withSummary ? [user(compactionText(summary ?? ""))] : []),
          user("What was the number?"),
        ],
        max_output_tokens: 1,
        store: false,
      });
    const plain = await asText(true);
    expect(plain.json.usage.input_tokens).toBe(followUp.json.usage.input_tokens);
    const without = await asText(false);
    expect(without.json.usage.input_tokens).toBeLessThan(followUp.json.usage.input_tokens);

    // Another tenant cannot open it.
    const foreign = await post<{ error: { param: string; type: string } }>(
      "/v1/responses",
      { input: [item, user("hi")], max_output_tokens: 1 },
      OTHER_TENANT_API_KEY,
    );
    expect(foreign.response.status).toBe(400);
    expect(foreign.json.error).toMatchObject({ type: "invalid_request_error", param: "input.0.encrypted_content" });
    console.log(
      `compaction: first prompt=${first.json.usage.input_tokens} | compact ${compacted.cache} cached=${compacted.json.usage?.input_tokens_details.cached_tokens} prompt=${compacted.json.usage?.input_tokens} | follow-up ${followUp.cache} prompt=${followUp.json.usage.input_tokens} | next ${next.cache} cached=${next.json.usage.input_tokens_details.cached_tokens} prompt=${next.json.usage.input_tokens}`,
    );
  });
});
