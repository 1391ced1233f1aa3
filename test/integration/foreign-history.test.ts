/**
 * A history moved here from Anthropic's API, through the whole stack (edge in workerd → gRPC →
 * real worker and tokenizer): a foreign web search exchange is counted and served as readable
 * context (title, URL, age), far smaller than its raw JSON with the per-hit ciphertext.
 */
import { describe, expect, inject, it } from "vitest";
import { postJson } from "../support/api.ts";

const edge = inject("edgeUrl");

/** Anthropic-style ciphertext: ~1.6 KB of base64 per hit. */
const cipher = (seed: number) =>
  `Eq${Array.from({ length: 400 }, (_, i) => ((i * 7919 + seed) % 997).toString(36).padStart(2, "0")).join("")}`;

function exchange(kind: (type: string) => string) {
  const hits = Array.from({ length: 5 }, (_, i) => ({
    type: kind("web_search_result"),
    url: `https://site${i}.example/article`,
    title: `Article ${i} about Frontier`,
    page_age: `${i + 1} days ago`,
    encrypted_content: cipher(i),
  }));
  return {
    model: "frontier-test",
    messages: [
      { role: "user", content: "What changed in Frontier this week?" },
      {
        role: "assistant",
        content: [
          {
            type: kind("server_tool_use"),
            id: "srvtoolu_01Abc",
            name: "web_search",
            input: { query: "frontier news" },
          },
          { type: kind("web_search_tool_result"), tool_use_id: "srvtoolu_01Abc", content: hits },
          {
            type: "text",
            text: "Frontier added hosted tools.",
            citations: [
              {
                type: "web_search_result_location",
                url: hits[0]?.url,
                title: hits[0]?.title,
                encrypted_index: cipher(9).slice(0, 80),
                cited_text: "hosted tools",
              },
            ],
          },
        ],
      },
      { role: "user", content: "Summarise it in one line." },
    ],
  };
}

async function countTokens(body: unknown): Promise<number> {
  const res = await postJson(`${edge}/v1/messages/count_tokens`, body);
  expect(res.status).toBe(200);
  return ((await res.json()) as { input_tokens: number }).input_tokens;
}

describe("a foreign web search exchange", () => {
  it("counts far fewer tokens rendered readably than as raw JSON with its ciphertext", async () => {
    const readable = await countTokens(exchange((type) => type));
    // The same blocks under kinds Frontier does not know take the generic path: their raw JSON, as
    // every foreign block was rendered before.
    const raw = await countTokens(exchange((type) => `unknown_${type}`));
    const plain = await countTokens({
      model: "frontier-test",
      messages: [{ role: "user", content: "What changed in Frontier this week?" }],
    });
    const message = `readable ${readable} tokens vs raw ${raw} tokens (the question alone: ${plain})`;
    console.log(`foreign search exchange: ${message}`);
    expect(readable, message).toBeGreaterThan(plain + 20);
    expect(readable * 5, message).toBeLessThan(raw);
  });

  it("is served: a turn after it answers normally", async () => {
    const res = await postJson(`${edge}/v1/messages`, { ...exchange((type) => type), max_tokens: 4 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { type: string; usage: { input_tokens: number } };
    expect(body.type).toBe("message");
    expect(body.usage.input_tokens).toBeGreaterThan(0);
  });
});
