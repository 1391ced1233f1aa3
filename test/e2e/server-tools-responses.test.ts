/**
 * Hosted web_search on /v1/responses, run by Frontier inside the turn against the local fake
 * SearXNG, through the OpenAI SDK (the scripted test policy forces one fixed search on a user turn).
 */
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, inject, it } from "vitest";
import { SCRIPTED_SEARCH_QUERY } from "../../gpu-worker/generate/sampling-policy.ts";
import { LOCAL_API_KEY } from "../support/api.ts";

const client = new OpenAI({ baseURL: `${inject("edgeUrl")}/v1`, apiKey: LOCAL_API_KEY, maxRetries: 0 });
type Item = { type: string; [key: string]: unknown };

describe("hosted web_search on /v1/responses", () => {
  it("returns a completed web_search_call (action, sources, sealed result) before the answer", async () => {
    const response = await client.responses.create({
      model: "frontier-test",
      max_output_tokens: 200,
      tools: [{ type: "web_search" }],
      input: "Search the web for frontier.",
    });
    const output = response.output as unknown as Item[];
    expect(output.map((i) => i.type)).toEqual(["web_search_call", "message"]);
    const call = output[0] as Item & { action: { type: string; query: string; sources: { url: string }[] } };
    expect(call.id).toMatch(/^ws_/);
    expect(call.status).toBe("completed");
    expect(call.action.type).toBe("search");
    expect(call.action.query).toBe(SCRIPTED_SEARCH_QUERY);
    expect(call.action.sources.map((s) => s.url)).toContain(`${inject("fakeWebUrl")}/page.html`);
    expect(String(call.encrypted_content)).toMatch(/^frv1\./);
    expect(response.status).toBe("completed");
  });

  it("streams the web_search_call events in order", async () => {
    const stream = client.responses.stream({
      model: "frontier-test",
      max_output_tokens: 200,
      tools: [{ type: "web_search_preview" }],
      input: "Search, streaming.",
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const searchEvents = types.filter((t) => t.startsWith("response.web_search_call."));
    expect(searchEvents).toEqual([
      "response.web_search_call.in_progress",
      "response.web_search_call.searching",
      "response.web_search_call.completed",
    ]);
    expect(types.indexOf("response.web_search_call.completed")).toBeLessThan(
      types.indexOf("response.output_text.delta"),
    );
    const final = await stream.finalResponse();
    expect(final.output[0]?.type).toBe("web_search_call");
  });

  it("continues after a search live: by previous_response_id and by a store:false replay of the items", async () => {
    const tools = [{ type: "web_search" as const }];
    const first = await client.responses.create({
      model: "frontier-test",
      max_output_tokens: 200,
      tools,
      input: "Search once more.",
      prompt_cache_key: crypto.randomUUID(),
    });
    const chained = await client.responses
      .create({
        model: "frontier-test",
        max_output_tokens: 20,
        tools,
        previous_response_id: first.id,
        input: "Thanks.",
      })
      .withResponse();
    expect(chained.response.headers.get("x-frontier-cache")).toMatch(/decision=live-text-prefix; miss=none/);

    const key = crypto.randomUUID();
    const own = await client.responses.create({
      model: "frontier-test",
      max_output_tokens: 200,
      tools,
      store: false,
      input: "Search without storing.",
      prompt_cache_key: key,
    });
    const replay: ResponseInputItem[] = [
      { role: "user", content: "Search without storing." },
      ...(own.output as unknown as ResponseInputItem[]),
      { role: "user", content: "Thanks." },
    ];
    const replayed = await client.responses
      .create({
        model: "frontier-test",
        max_output_tokens: 20,
        tools,
        store: false,
        input: replay,
        prompt_cache_key: key,
      })
      .withResponse();
    expect(replayed.response.headers.get("x-frontier-cache")).toMatch(/decision=live-text-prefix; miss=none/);
  });
});
