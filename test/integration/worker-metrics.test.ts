/**
 * The worker's operations listener over a real socket, scraped before and after real turns through
 * the edge: a cold first turn and its live continuation move the vLLM-named counters and Frontier's
 * own by exactly the usage the client was told, the finish log line carries every phase, and
 * /metrics refuses a missing or wrong token.
 */
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { postJson, randomHint, TEST_METRICS_TOKEN } from "../support/api.ts";
import { delta, parsePromText, type Sample } from "../support/prom-text.ts";

const opsUrl = inject("workerOpsUrl");
const messagesUrl = `${inject("edgeUrl")}/v1/messages`;

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${opsUrl}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parsePromText(await res.text());
}

interface Usage {
  input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}
interface Message {
  content: { type: string; id?: string }[];
  stop_reason: string;
  usage: Usage;
}

const tool = {
  name: "lookup",
  description: "Look a word up",
  input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};

async function turn(body: unknown, hint: string): Promise<{ message: Message; cache: string; requestId: string }> {
  const res = await postJson(messagesUrl, body, { headers: { "x-claude-code-session-id": hint } });
  expect(res.status).toBe(200);
  return {
    message: (await res.json()) as Message,
    cache: res.headers.get("x-frontier-cache") ?? "",
    requestId: res.headers.get("request-id") ?? "",
  };
}

/** Counter movements every finished turn must cause, from the usage the client got. */
function expectTurnCounted(before: Sample[], after: Sample[], message: Message, decision: string): void {
  const usage = message.usage;
  const finished_reason = message.stop_reason === "max_tokens" ? "length" : "stop";
  const prompt = usage.input_tokens + usage.cache_read_input_tokens;
  expect(delta(before, after, "frontier:prompt_tokens_total")).toBe(prompt);
  expect(delta(before, after, "frontier:prefix_cache_queries_total")).toBe(prompt);
  expect(delta(before, after, "frontier:prefix_cache_hits_total")).toBe(usage.cache_read_input_tokens);
  expect(delta(before, after, "frontier:generation_tokens_total")).toBe(usage.output_tokens);
  expect(delta(before, after, "frontier:tokens_prefilled_total", { decision })).toBe(usage.input_tokens);
  expect(delta(before, after, "frontier:tokens_reused_total", { decision })).toBe(usage.cache_read_input_tokens);
  expect(delta(before, after, "frontier:continuation_decisions_total", { decision })).toBe(1);
  expect(delta(before, after, "frontier:request_success_total", { finished_reason })).toBe(1);
  expect(delta(before, after, "frontier:e2e_request_latency_seconds_count")).toBe(1);
  const sampled = usage.output_tokens > 0 ? 1 : 0;
  expect(delta(before, after, "frontier:time_to_first_token_seconds_count")).toBe(sampled);
  expect(delta(before, after, "frontier:request_prompt_tokens_sum")).toBe(prompt);
  // One inter-token gap per sampled token after the first.
  expect(delta(before, after, "frontier:inter_token_latency_seconds_count")).toBe(Math.max(0, usage.output_tokens - 1));
}

describe("worker /metrics", () => {
  it("refuses a scrape without the token or with a wrong one, and serves the probes without one", async () => {
    expect((await fetch(`${opsUrl}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${opsUrl}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain("frontier:");
    expect((await fetch(`${opsUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${opsUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, workerId: "worker-1" });
  });

  it("labels every series like vLLM and uses vLLM's bucket boundaries", async () => {
    const samples = await scrape();
    const running = samples.find((s) => s.name === "frontier:num_requests_running");
    expect(running?.labels).toMatchObject({ engine: "0" });
    expect(running?.labels.model_name).toBeTruthy();
    const ttftBuckets = samples
      .filter((s) => s.name === "frontier:time_to_first_token_seconds_bucket")
      .map((s) => s.labels.le);
    expect(ttftBuckets.slice(0, 3)).toEqual(["0.001", "0.005", "0.01"]);
    expect(ttftBuckets.at(-2)).toBe("2560");
    const kv = samples.find((s) => s.name === "frontier:kv_cache_usage_perc");
    expect(kv?.value).toBeGreaterThanOrEqual(0);
    expect(kv?.value).toBeLessThanOrEqual(1);
  });

  it("moves the counters by a cold turn's and then a live continuation's usage", async () => {
    const hint = randomHint();
    const system = `You are metrics test agent ${hint}.`;
    const first = { role: "user", content: "Look up one word please." };
    const coldBody = {
      model: "m",
      max_tokens: 120,
      temperature: 0,
      system,
      tools: [tool],
      tool_choice: { type: "any" },
      messages: [first],
    };

    const beforeCold = await scrape();
    const cold = await turn(coldBody, hint);
    const afterCold = await scrape();
    expect(cold.cache).toContain("decision=cold");
    expectTurnCounted(beforeCold, afterCold, cold.message, "cold");
    expect(cold.message.usage.cache_read_input_tokens).toBe(0);

    const ids = cold.message.content.filter((b) => b.type === "tool_use").map((b) => b.id ?? "");
    expect(ids.length).toBeGreaterThan(0);
    // The tool-frontier write is deferred off the live path (a tool result arriving first cancels it):
    // wait for it to land, so the counters below see exactly one write.
    const frontierWrites = { reason: "tool-frontier" };
    for (
      let i = 0;
      i < 200 && delta(beforeCold, await scrape(), "frontier:checkpoint_writes_total", frontierWrites) < 1;
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const liveBody = {
      ...coldBody,
      tool_choice: { type: "none" },
      max_tokens: 16,
      messages: [
        first,
        { role: "assistant", content: cold.message.content },
        { role: "user", content: ids.map((id) => ({ type: "tool_result", tool_use_id: id, content: "ok" })) },
      ],
    };
    const live = await turn(liveBody, hint);
    const afterLive = await scrape();
    expect(live.cache).toContain("decision=live-tool-ids");
    expectTurnCounted(afterCold, afterLive, live.message, "live-tool-ids");
    expect(live.message.usage.cache_read_input_tokens).toBeGreaterThan(0);
    // The cold turn ended in tool_use: its tool-frontier checkpoint landed (once) before the next turn.
    expect(delta(beforeCold, afterLive, "frontier:checkpoint_writes_total", { reason: "tool-frontier" })).toBe(1);
    expect(delta(beforeCold, afterLive, "frontier:checkpoint_write_seconds_count", { reason: "tool-frontier" })).toBe(
      1,
    );
    expect(
      delta(beforeCold, afterLive, "frontier:checkpoint_write_bytes_total", { reason: "tool-frontier" }),
    ).toBeGreaterThan(0);

    // One log line explains each turn: its decision, its phases, its request and session.
    const lines = readFileSync(inject("workerLogFile"), "utf8").split("\n");
    for (const { requestId, decision } of [
      { requestId: cold.requestId, decision: "cold" },
      { requestId: live.requestId, decision: "live-tool-ids" },
    ]) {
      const line = lines.find((l) => l.includes("turn finished") && l.includes(`request=${requestId}`));
      expect(line, `finish line of ${requestId}`).toBeDefined();
      expect(line).toContain(`decision=${decision}`);
      for (const field of ["queue_ms", "restore_ms", "prefill_ms", "first_token_ms", "decode_ms", "checkpoint_ms"]) {
        expect(line).toMatch(new RegExp(`${field}=\\d+(\\.\\d)?( |$)`));
      }
      expect(line).toMatch(/session=[0-9a-f]{8}/);
    }
  });
});
