/**
 * Issue 33: Kimi K2 and MiniMax M2 tool loops end to end, through the real edge (workerd) and a real
 * worker serving each family's real-vocabulary test model (its format recognised from the GGUF's
 * template), over Anthropic Messages and OpenAI Responses. Two grammar-forced tool turns, an answer
 * and a new user turn: every turn after the first prefills only its suffix (the cache header, usage),
 * the calls come back as tool_use / function_call items carrying Frontier's routable IDs, and Kimi's
 * `functions.NAME:IDX` never reaches the client. The model keeps seeing its own `functions.NAME:IDX`:
 * the second tool turn continues from a KV whose results name them, and the new user turn's full
 * history re-renders to a byte prefix of that KV (live text prefix). count_tokens of the first
 * request counts what that turn prefilled (later histories: see the issue 33 report; count_tokens
 * has no session, so it renders client-sent calls without the sampled bytes or hidden reasoning).
 * No Responses turn vanishes from the rebuilt history: MiniMax's answer, all reasoning the parser
 * shows nothing of, keeps a reasoning item; Qwen3 with thinking on runs the Responses loop too, its
 * answer (whitespace the parser drops) keeping an empty message.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FamilyName } from "../../native/model/families.ts";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { verifyId } from "../../shared/ids.ts";
import { postJson, randomHint } from "../support/api.ts";
import { startFamilyStack } from "../support/stack-setup.ts";

/** The suffix of a tool-result turn (end of the call turn, short results, the next assistant prefix) is tens of tokens. */
const MAX_SUFFIX = 60;
/** What Kimi's own call IDs look like: none of it may reach a client. */
const KIMI_ID = /functions\.\w+:\d+/;

const LOOKUP = {
  name: "lookup",
  description: "Look a word up",
  schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};

interface Cache {
  decision: string;
  cached: number;
  prompt: number;
}

/** `x-frontier-cache: decision=…; miss=…; cached=…; prompt=…`. */
function cacheOf(res: Response): Cache {
  const header = res.headers.get("x-frontier-cache") ?? "";
  const field = (name: string) => new RegExp(`${name}=([\\w-]+)`).exec(header)?.[1] ?? "";
  return { decision: field("decision"), cached: Number(field("cached")), prompt: Number(field("prompt")) };
}

/** Each turn's figures, printed per family × protocol for the record. */
function report(label: string, turns: Cache[]): void {
  const rows = turns.map(
    (t, i) => `turn ${i + 1} ${t.decision} prompt=${t.prompt} cached=${t.cached} prefilled=${t.prompt - t.cached}`,
  );
  process.stdout.write(`[family-tool-loops] ${label}\n  ${rows.join("\n  ")}\n`);
}

/** A continued turn: the decision, and only the suffix after `kvBefore` tokens prefilled. */
function expectSuffixOnly(cache: Cache, decision: string, kvBefore: number): void {
  expect(cache.decision).toBe(decision);
  // A turn cut by max tokens sampled its last token without feeding it: all but that one is reused.
  expect(cache.cached).toBeGreaterThanOrEqual(kvBefore - 1);
  expect(cache.cached).toBeLessThanOrEqual(kvBefore);
  expect(cache.prompt - cache.cached).toBeGreaterThan(0);
  expect(cache.prompt - cache.cached).toBeLessThan(MAX_SUFFIX);
}

async function expectRoutableId(id: string, kind: "toolu" | "call"): Promise<void> {
  expect(id).toMatch(new RegExp(`^${kind}_`));
  expect((await verifyId(DEV_ID_SECRET, id, "local"))?.kind).toBe(kind);
}

interface AnthropicMessage {
  content: Array<{ type: string; id?: string; name?: string; input?: unknown }>;
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number };
}

async function messagesLoop(edgeUrl: string, family: FamilyName): Promise<void> {
  const url = `${edgeUrl}/v1/messages`;
  const headers = { "x-claude-code-session-id": randomHint() };
  const tools = [{ name: LOOKUP.name, description: LOOKUP.description, input_schema: LOOKUP.schema }];
  const messages: unknown[] = [{ role: "user", content: "Look up two words, then two more." }];
  const counted = await postJson(`${url}/count_tokens`, { model: "m", tools, messages }, { headers });
  expect(counted.status).toBe(200);
  const firstCount = ((await counted.json()) as { input_tokens: number }).input_tokens;
  const turns: Cache[] = [];
  const seenIds = new Set<string>();
  const turn = async (extra: Record<string, unknown>) => {
    const body = { model: "m", max_tokens: 200, temperature: 0, tools, messages, ...extra };
    const res = await postJson(url, body, { headers });
    const raw = await res.text();
    expect(res.status, raw).toBe(200);
    expect(raw).not.toMatch(KIMI_ID);
    const cache = cacheOf(res);
    turns.push(cache);
    return { message: JSON.parse(raw) as AnthropicMessage, cache };
  };
  const kvAfter = (m: AnthropicMessage) =>
    m.usage.input_tokens + m.usage.cache_read_input_tokens + m.usage.output_tokens;
  const callTurn = async () => {
    const { message, cache } = await turn({ tool_choice: { type: "any" } });
    expect(message.stop_reason).toBe("tool_use");
    const calls = message.content.filter((b) => b.type === "tool_use");
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.name).toBe(LOOKUP.name);
      expect(call.input).toMatchObject({ word: expect.any(String) });
      await expectRoutableId(call.id ?? "", "toolu");
      expect(seenIds.has(call.id ?? "")).toBe(false);
      seenIds.add(call.id ?? "");
    }
    messages.push({ role: "assistant", content: message.content });
    const results = calls.map((c, i) => ({ type: "tool_result", tool_use_id: c.id, content: `meaning ${i}` }));
    messages.push({ role: "user", content: results.reverse() });
    return { message, cache };
  };

  const first = await callTurn();
  expect(first.cache.cached).toBe(0);
  expect(first.cache.prompt).toBe(firstCount);
  const second = await callTurn();
  expectSuffixOnly(second.cache, "live-tool-ids", kvAfter(first.message));
  const answer = await turn({ tool_choice: { type: "none" }, max_tokens: 12 });
  expectSuffixOnly(answer.cache, "live-tool-ids", kvAfter(second.message));
  messages.push(
    { role: "assistant", content: answer.message.content },
    { role: "user", content: "Thanks. Once more?" },
  );
  const next = await turn({ tool_choice: { type: "none" }, max_tokens: 4 });
  expect(["live-text-prefix", "live-token-prefix"]).toContain(next.cache.decision);
  expectSuffixOnly(next.cache, next.cache.decision, kvAfter(answer.message));
  report(`${family} × Messages`, turns);
}

interface ResponsesItem {
  type: string;
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
}

interface ResponsesBody {
  id: string;
  output: ResponsesItem[];
  usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number } };
}

/** `reasoning`: the request's `reasoning` (thinking on); absent, thinking is off. */
async function responsesLoop(edgeUrl: string, family: FamilyName, reasoning?: { effort: string }): Promise<void> {
  const url = `${edgeUrl}/v1/responses`;
  const tools = [{ type: "function", name: LOOKUP.name, description: LOOKUP.description, parameters: LOOKUP.schema }];
  const turns: Cache[] = [];
  const seenIds = new Set<string>();
  let previous: string | undefined;
  const turn = async (input: unknown, extra: Record<string, unknown>) => {
    const body = {
      model: "m",
      temperature: 0,
      instructions: "You are a dictionary agent.",
      tools,
      input,
      reasoning,
      ...extra,
    };
    const res = await postJson(url, { ...body, ...(previous ? { previous_response_id: previous } : {}) });
    const raw = await res.text();
    expect(res.status, raw).toBe(200);
    expect(raw).not.toMatch(KIMI_ID);
    const cache = cacheOf(res);
    turns.push(cache);
    const response = JSON.parse(raw) as ResponsesBody;
    // No turn vanishes: one that showed nothing still has an item, or the rebuilt history would lose it.
    expect(response.output.length).toBeGreaterThan(0);
    previous = response.id;
    return { response, cache };
  };
  const kvAfter = (r: ResponsesBody) => r.usage.input_tokens + r.usage.output_tokens;
  const callTurn = async (input: unknown) => {
    const { response, cache } = await turn(input, { tool_choice: "required", max_output_tokens: 200 });
    const calls = response.output.filter((item) => item.type === "function_call");
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.name).toBe(LOOKUP.name);
      expect(JSON.parse(call.arguments ?? "")).toMatchObject({ word: expect.any(String) });
      await expectRoutableId(call.call_id ?? "", "call");
      expect(seenIds.has(call.call_id ?? "")).toBe(false);
      seenIds.add(call.call_id ?? "");
    }
    const outputs = calls.map((c, i) => ({ type: "function_call_output", call_id: c.call_id, output: `meaning ${i}` }));
    return { response, cache, outputs: outputs.reverse() };
  };

  try {
    const first = await callTurn("Look up two words, then two more.");
    expect(first.cache.cached).toBe(0);
    const second = await callTurn(first.outputs);
    expectSuffixOnly(second.cache, "live-tool-ids", kvAfter(first.response));
    const answer = await turn(second.outputs, { tool_choice: "none", max_output_tokens: 12 });
    expectSuffixOnly(answer.cache, "live-tool-ids", kvAfter(second.response));
    // Every MiniMax turn opens inside `<think>`; this answer is all reasoning the parser shows nothing
    // of (its 12 tokens end there), and its reasoning item keeps the turn in the rebuilt history.
    if (family === "minimax-m2") expect(answer.response.output[0]?.type).toBe("reasoning");
    const next = await turn("Thanks. Once more?", { tool_choice: "none", max_output_tokens: 4 });
    expect(["live-text-prefix", "live-token-prefix"]).toContain(next.cache.decision);
    expectSuffixOnly(next.cache, next.cache.decision, kvAfter(answer.response));
  } finally {
    report(`${family}${reasoning ? " (thinking)" : ""} × Responses`, turns);
  }
}

describe.each<FamilyName>(["kimi-k2", "minimax-m2"])("%s model through the edge", (family) => {
  let stack: Awaited<ReturnType<typeof startFamilyStack>>;

  beforeAll(async () => {
    stack = await startFamilyStack(await ensureFamilyModel(family));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("Messages: two forced tool turns, an answer and a new user turn, each after the first suffix-only", async () => {
    await messagesLoop(stack.edgeUrl, family);
  });

  it("Responses: the same loop by previous_response_id, each turn after the first suffix-only", async () => {
    await responsesLoop(stack.edgeUrl, family);
  });
});

describe("qwen3 model with thinking on through the edge", () => {
  let stack: Awaited<ReturnType<typeof startFamilyStack>>;

  beforeAll(async () => {
    stack = await startFamilyStack(await ensureFamilyModel("qwen3"));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("Responses with reasoning.effort: the same loop; an answer that showed nothing keeps its turn", async () => {
    await responsesLoop(stack.edgeUrl, "qwen3", { effort: "low" });
  });
});
