/**
 * The ladder's shared-prefix rung through the real edge and worker: a tenant's second conversation
 * that starts with the first one's system prompt, tools and project notes reports
 * `decision=shared-prefix` in `x-frontier-cache`, the reused tokens as `cache_read_input_tokens`,
 * and the worker's counters move by exactly that; another tenant sending the identical request
 * gets a cold prefill.
 */
import { describe, expect, inject, it } from "vitest";
import { OTHER_TENANT_API_KEY, postJson, randomHint, TEST_METRICS_TOKEN } from "../support/api.ts";
import { delta, parsePromText, type Sample } from "../support/prom-text.ts";

const opsUrl = inject("workerOpsUrl");
const messagesUrl = `${inject("edgeUrl")}/v1/messages`;

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${opsUrl}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return parsePromText(await res.text());
}

interface Usage {
  input_tokens: number;
  cache_read_input_tokens: number;
}

const tool = {
  name: "lookup",
  description: "Look a word up",
  input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};

async function firstTurn(
  system: string,
  task: string,
  headers: Record<string, string> = {},
): Promise<{ cache: string; usage: Usage }> {
  const notes = "Project notes: builds use make, tests live in test/, keep every function small. ".repeat(10);
  const body = {
    model: "m",
    max_tokens: 4,
    temperature: 0,
    system,
    tools: [tool],
    messages: [{ role: "user", content: `${notes}\nTask: ${task}` }],
  };
  const res = await postJson(messagesUrl, body, { headers: { "x-claude-code-session-id": randomHint(), ...headers } });
  expect(res.status).toBe(200);
  return { cache: res.headers.get("x-frontier-cache") ?? "", usage: ((await res.json()) as { usage: Usage }).usage };
}

describe("shared prefixes through the edge", () => {
  it("a second conversation of the tenant reuses the first one's prefix: header, usage and metrics say so", async () => {
    const system = `You are the shared-prefix test agent ${randomHint()}. Follow the project's conventions.`;
    const cold = await firstTurn(system, "fix the flaky test");
    expect(cold.cache).toContain("decision=cold; miss=no-live-state");

    const before = await scrape();
    const second = await firstTurn(system, "rename the helper");
    const after = await scrape();
    expect(second.cache).toMatch(/^decision=shared-prefix; miss=no-live-state; cached=\d+; prompt=\d+$/);
    const cached = Number(/cached=(\d+)/.exec(second.cache)?.[1]);
    const prompt = Number(/prompt=(\d+)/.exec(second.cache)?.[1]);
    // System, tools and the notes: all but the task's last line.
    expect(cached).toBeGreaterThan(800);
    expect(prompt - cached).toBeLessThan(40);
    expect(second.usage.cache_read_input_tokens).toBe(cached);
    expect(second.usage.input_tokens).toBe(prompt - cached);
    const decision = { decision: "shared-prefix" };
    expect(delta(before, after, "frontier:continuation_decisions_total", decision)).toBe(1);
    expect(delta(before, after, "frontier:tokens_reused_total", decision)).toBe(cached);
    expect(delta(before, after, "frontier:tokens_prefilled_total", decision)).toBe(prompt - cached);
    expect(delta(before, after, "frontier:prefix_cache_hits_total")).toBe(cached);

    // Another tenant, the very same request: its keyed index finds nothing of the first tenant's.
    const other = await firstTurn(system, "rename the helper", { "x-api-key": OTHER_TENANT_API_KEY });
    expect(other.cache).toContain("decision=cold; miss=no-live-state; cached=0");
    expect(other.usage.cache_read_input_tokens).toBe(0);
  });
});
