/**
 * A declared hosted tool with no provider on the worker (this tier's worker has none): not offered
 * to the model — the prompt is the same as without it — and said so, in a response header and a
 * log line, on /v1/messages and /v1/responses alike.
 */
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY, postJson } from "../support/api.ts";

const messages = [{ role: "user", content: "Hello there" }];

async function messagesTurn(tools: unknown[] | undefined): Promise<{ headers: Headers; input: number }> {
  const response = await postJson(`${inject("edgeUrl")}/v1/messages`, {
    model: "t",
    max_tokens: 4,
    messages,
    ...(tools ? { tools } : {}),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { usage: { input_tokens: number; cache_read_input_tokens: number } };
  return { headers: response.headers, input: body.usage.input_tokens + body.usage.cache_read_input_tokens };
}

describe("hosted tools without a provider", () => {
  it("Messages: web_search / web_fetch and other hosted types are not offered, and named", async () => {
    const logStart = readFileSync(inject("workerLogFile"), "utf8").length;
    const plain = await messagesTurn(undefined);
    const declared = await messagesTurn([
      { type: "web_search_20250305", name: "web_search", max_uses: 2 },
      { type: "web_fetch_20250910", name: "web_fetch" },
      { type: "bash_20250124", name: "bash" },
    ]);
    expect(declared.headers.get("x-frontier-tools-not-offered")).toBe(
      "bash_20250124, web_search_20250305, web_fetch_20250910",
    );
    expect(plain.headers.get("x-frontier-tools-not-offered")).toBeNull();
    // Nothing about the tools reached the prompt.
    expect(declared.input).toBe(plain.input);
    const log = readFileSync(inject("workerLogFile"), "utf8").slice(logStart);
    expect(log).toMatch(/server tools not offered tools=web_search_20250305,web_fetch_20250910/);
  });

  it("Messages streaming names them too", async () => {
    const response = await postJson(`${inject("edgeUrl")}/v1/messages`, {
      model: "t",
      max_tokens: 4,
      stream: true,
      messages,
      tools: [{ type: "web_search_20250305", name: "web_search" }],
    });
    expect(response.headers.get("x-frontier-tools-not-offered")).toBe("web_search_20250305");
    await response.text();
  });

  it("Responses: web_search is not offered and named", async () => {
    const response = await fetch(`${inject("edgeUrl")}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${LOCAL_API_KEY}` },
      body: JSON.stringify({
        model: "t",
        max_output_tokens: 4,
        input: "Hello there",
        tools: [{ type: "web_search", external_web_access: false }, { type: "local_shell" }],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-frontier-tools-not-offered")).toBe("local_shell, web_search");
    const body = (await response.json()) as { output: { type: string }[] };
    expect(body.output.some((i) => i.type === "web_search_call")).toBe(false);
  });
});
