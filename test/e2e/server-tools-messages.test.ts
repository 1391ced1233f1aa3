/**
 * Hosted web_search / web_fetch on /v1/messages, run by Frontier inside the turn against the local
 * fake web (SearXNG JSON API + pages), through the Anthropic SDK. Calls are forced: the scripted
 * test policy makes one fixed web_search (or a web_fetch of the URL the user names), tool_choice
 * forces a search at every step for the max_uses / pause_turn loop.
 */
import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, inject, it } from "vitest";
import { SCRIPTED_SEARCH_QUERY } from "../../gpu-worker/generate/sampling-policy.ts";
import { LOCAL_API_KEY, postJson } from "../support/api.ts";
import { FAKE_PAGE_TEXT, FAKE_PAGE_TITLE } from "../support/fake-web.ts";

const client = new Anthropic({ baseURL: inject("edgeUrl"), apiKey: LOCAL_API_KEY, maxRetries: 0 });
const webSearch = { type: "web_search_20250305" as const, name: "web_search" as const, max_uses: 3 };
const webFetch = { type: "web_fetch_20250910", name: "web_fetch" };
type Block = { type: string; [key: string]: unknown };

function logSince(offset: number): string {
  return readFileSync(inject("workerLogFile"), "utf8").slice(offset);
}

describe("hosted web_search on /v1/messages", () => {
  it("runs the search inside the turn and answers from its result (non-streaming), the next step live", async () => {
    const logStart = readFileSync(inject("workerLogFile"), "utf8").length;
    const message = await client.messages.create({
      model: "frontier-test",
      max_tokens: 200,
      tools: [webSearch],
      messages: [{ role: "user", content: "Search the web for frontier." }],
    });
    const content = message.content as unknown as Block[];
    expect(content.map((b) => b.type)).toEqual(["server_tool_use", "web_search_tool_result", "text"]);
    const [use, result] = content;
    expect(use?.id).toMatch(/^srvtoolu_/);
    expect(use?.name).toBe("web_search");
    expect(use?.input).toEqual({ query: SCRIPTED_SEARCH_QUERY });
    expect(result?.tool_use_id).toBe(use?.id);
    const hits = result?.content as Block[];
    expect(hits[0]).toMatchObject({ type: "web_search_result", url: `${inject("fakeWebUrl")}/page.html` });
    expect(hits[0]?.title).toBe(FAKE_PAGE_TITLE);
    expect(hits[0]?.page_age).toBe("2026-11-30T00:00:00");
    expect(String(hits[0]?.encrypted_content)).toMatch(/^frv1\./);
    expect(String(hits[0]?.encrypted_content)).not.toContain("frontier scripted");
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.server_tool_use?.web_search_requests).toBe(1);
    // The step after the result appended only its suffix to the live KV.
    expect(logSince(logStart)).toMatch(/live continuation match=tool-output-ids ids=1/);
  });

  it("streams server_tool_use (input_json_delta), then the result block, then the answer", async () => {
    const stream = client.messages.stream({
      model: "frontier-test",
      max_tokens: 200,
      tools: [webSearch],
      messages: [{ role: "user", content: "Search the web, streaming." }],
    });
    const events: { type: string; block?: string; delta?: string }[] = [];
    for await (const event of stream) {
      if (event.type === "content_block_start") events.push({ type: event.type, block: event.content_block.type });
      else if (event.type === "content_block_delta") events.push({ type: event.type, delta: event.delta.type });
      else events.push({ type: event.type });
    }
    const starts = events.filter((e) => e.type === "content_block_start").map((e) => e.block);
    expect(starts).toEqual(["server_tool_use", "web_search_tool_result", "text"]);
    const useStart = events.findIndex((e) => e.block === "server_tool_use");
    expect(events[useStart + 1]).toEqual({ type: "content_block_delta", delta: "input_json_delta" });
    const final = await stream.finalMessage();
    const use = final.content[0] as unknown as Block;
    expect(use.input).toEqual({ query: SCRIPTED_SEARCH_QUERY });
    expect(final.usage.server_tool_use?.web_search_requests).toBe(1);
  });

  it("a replay of the turn reopens its sealed hits (live text prefix); a tampered hit does not open", async () => {
    const url = `${inject("edgeUrl")}/v1/messages`;
    const session = { "x-claude-code-session-id": crypto.randomUUID() };
    const first = await postJson(
      url,
      { model: "t", max_tokens: 200, tools: [webSearch], messages: [{ role: "user", content: "Search once." }] },
      { headers: session },
    );
    expect(first.status).toBe(200);
    const turn = (await first.json()) as { content: Block[] };
    const next = (content: Block[]) => ({
      model: "t",
      max_tokens: 20,
      tools: [webSearch],
      messages: [
        { role: "user", content: "Search once." },
        { role: "assistant", content },
        { role: "user", content: "Thanks." },
      ],
    });
    const replay = await postJson(url, next(turn.content), { headers: session });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("x-frontier-cache")).toMatch(/decision=live-text-prefix; miss=none/);
    await replay.json();

    const tampered = structuredClone(turn.content);
    const hit = ((tampered[1]?.content ?? []) as Block[])[0] as Block;
    const blob = String(hit.encrypted_content);
    hit.encrypted_content = `${blob.slice(0, -4)}${blob.slice(-4) === "AAAA" ? "BBBB" : "AAAA"}`;
    const forged = await postJson(url, next(tampered), { headers: session });
    expect(forged.status).toBe(200);
    // The hit renders without the text it sealed (never as ciphertext): not the bytes the KV holds.
    expect(forged.headers.get("x-frontier-cache")).not.toMatch(/decision=live-text-prefix; miss=none/);
    await forged.json();
  });

  it("max_uses ends further searches with max_uses_exceeded; the step limit pauses the turn; the resume continues live", async () => {
    const tools = [{ ...webSearch, max_uses: 1 }];
    const user = { role: "user" as const, content: "Search as often as you can." };
    const paused = await client.messages.create({
      model: "frontier-test",
      max_tokens: 400,
      tools,
      tool_choice: { type: "tool", name: "web_search", disable_parallel_tool_use: true },
      messages: [user],
    });
    expect(paused.stop_reason).toBe("pause_turn");
    const content = paused.content as unknown as Block[];
    const results = content.filter((b) => b.type === "web_search_tool_result");
    // FRONTIER_SERVER_TOOL_STEPS=3 in this tier: three searches asked, one run, two refused.
    expect(content.filter((b) => b.type === "server_tool_use")).toHaveLength(3);
    expect(Array.isArray(results[0]?.content)).toBe(true);
    for (const refused of results.slice(1)) {
      expect(refused.content).toEqual({ type: "web_search_tool_result_error", error_code: "max_uses_exceeded" });
    }
    expect(paused.usage.server_tool_use?.web_search_requests).toBe(1);

    const resume = await postJson(`${inject("edgeUrl")}/v1/messages`, {
      model: "t",
      max_tokens: 200,
      tools,
      messages: [user, { role: "assistant", content: paused.content }],
    });
    expect(resume.status).toBe(200);
    expect(resume.headers.get("x-frontier-cache")).toMatch(/decision=live-tool-ids; miss=none/);
    const resumed = (await resume.json()) as { content: Block[]; stop_reason: string };
    expect(resumed.stop_reason).toBe("end_turn");
    expect(resumed.content.map((b) => b.type)).toEqual(["text"]);
  });
});

describe("hosted web_fetch on /v1/messages", () => {
  it("fetches the page the user names and reads its text (scripts and markup removed)", async () => {
    const page = `${inject("fakeWebUrl")}/page.html`;
    const response = await postJson(`${inject("edgeUrl")}/v1/messages`, {
      model: "t",
      max_tokens: 100,
      tools: [webFetch],
      messages: [{ role: "user", content: `Read ${page} please.` }],
    });
    expect(response.status).toBe(200);
    const message = (await response.json()) as { content: Block[]; usage: Record<string, unknown> };
    expect(message.content.map((b) => b.type)).toEqual(["server_tool_use", "web_fetch_tool_result", "text"]);
    const result = message.content[1]?.content as {
      type: string;
      url: string;
      content: { source: { data: string }; title: string };
    };
    expect(result.type).toBe("web_fetch_result");
    expect(result.url).toBe(page);
    expect(result.content.title).toBe(FAKE_PAGE_TITLE);
    expect(result.content.source.data).toContain(FAKE_PAGE_TEXT);
    expect(result.content.source.data).not.toContain("secret");
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 1 });
  });

  it("refuses a page that redirects to a private address (url_not_allowed), even with loopback allowed", async () => {
    const response = await postJson(`${inject("edgeUrl")}/v1/messages`, {
      model: "t",
      max_tokens: 100,
      tools: [webFetch],
      messages: [{ role: "user", content: `Read ${inject("fakeWebUrl")}/to-private please.` }],
    });
    const message = (await response.json()) as { content: Block[] };
    expect(message.content[1]).toMatchObject({
      type: "web_fetch_tool_result",
      content: { type: "web_fetch_tool_error", error_code: "url_not_allowed" },
    });
  });
});
