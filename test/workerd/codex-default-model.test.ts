/**
 * Codex 0.171's default-model requests through the real edge and a fake worker: the leading
 * `additional_tools` item becomes the header's tools, a `configuration_update` sets the effort, a call
 * of the code-mode `functions.exec` comes back as a namespaced `custom_tool_call`, tools added later
 * (continuing with `previous_response_id`, the first item coming from the stored record) render in
 * place without touching the header and stay on the session, `/v1/responses/input_tokens` counts the
 * same conversation, and an unknown item type is a 400 naming it before any worker is asked.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision, Role, StopReason, ThinkingMode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { CODEX_DEFAULT_FIRST_INPUT, codexDefaultBody } from "../unit/openai/codex-default-request.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

const MCP_TOOLS = {
  type: "additional_tools",
  role: "developer",
  tools: [
    {
      type: "namespace",
      name: "mcp__docs",
      description: "Docs server",
      tools: [{ type: "function", name: "search", description: "Search the docs", parameters: { type: "object" } }],
    },
  ],
};

/** A worker whose first turn on a session calls the code-mode exec tool, later turns answer in text. */
function execThenText(): FakeWorker {
  const turns = new Map<string, number>();
  return installFakeWorker(async function* ({ request }) {
    const n = turns.get(request.sessionId) ?? 0;
    turns.set(request.sessionId, n + 1);
    const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
    yield event({ case: "prompt", value: { promptTokens: 50, messageId, decision: CacheDecision.COLD } });
    if (n === 0) {
      const id = await mintId(SECRET, "call", request.tenantId, request.sessionId);
      yield event({ case: "toolCallStart", value: { index: 0, id, name: "functions.exec" } });
      yield event({
        case: "toolCallDelta",
        value: { index: 0, argumentsJson: JSON.stringify({ input: 'text("hi");' }) },
      });
      yield event({ case: "toolCallEnd", value: { index: 0 } });
      yield event({ case: "stop", value: { reason: StopReason.TOOL_USE, usage: { outputTokens: 5 } } });
    } else {
      yield event({ case: "textDelta", value: { text: "done" } });
      yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage: { outputTokens: 1 } } });
    }
  });
}

interface Output {
  id: string;
  output: { type: string; name?: string; namespace?: string; call_id?: string; input?: string }[];
}

const post = (path: string, body: unknown) => call(path, { method: "POST", bearer: true, body });

describe("Codex's default-model request (additional_tools, configuration_update, code mode)", () => {
  it("serves its tool loop: header tools from the leading item, a namespaced custom call, tools added in place", async () => {
    fake = execThenText();
    const first = await post("/v1/responses", {
      ...codexDefaultBody(CODEX_DEFAULT_FIRST_INPUT),
      stream: false,
      store: true,
    });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-frontier-tools-not-offered")).toBeNull();
    const response = (await first.json()) as Output & { model: string };
    // The model name Codex asked for is echoed; the configured model served it.
    expect(response.model).toBe("gpt-6.2-sol");
    const [call0] = response.output.filter((o) => o.type === "custom_tool_call");
    expect(call0).toMatchObject({ name: "exec", namespace: "functions", input: 'text("hi");' });
    const sent = fake.requests[0]?.conversation;
    expect(sent?.tools.map((t) => t.name)).toEqual(["functions.exec", "functions.wait", "clock.sleep"]);
    expect(sent?.referencedTools).toEqual([]);
    expect(sent?.thinking?.mode).toBe(ThinkingMode.ENABLED); // effort "low" (the configuration_update)

    // The tool output, with tools the client adds from here on; the leading item comes from the record.
    const output = { type: "custom_tool_call_output", call_id: call0?.call_id, output: "hi" };
    const next = {
      ...codexDefaultBody([output, MCP_TOOLS]),
      stream: false,
      store: true,
      previous_response_id: response.id,
    };
    const second = await post("/v1/responses", next);
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    const continued = fake.requests[1];
    expect(continued?.sessionId).toBe(fake.requests[0]?.sessionId);
    expect(continued?.conversation?.tools).toEqual(sent?.tools);
    expect(continued?.conversation?.referencedTools.map((t) => t.name)).toEqual(["mcp__docs.search"]);
    const last = continued?.conversation?.messages.at(-1);
    expect(last?.role).toBe(Role.SYSTEM);
    expect(last?.content[0]?.block.value).toMatchObject({ text: expect.stringContaining('"name":"mcp__docs.search"') });

    // input_tokens counts that same conversation on the worker.
    const counted = await post("/v1/responses/input_tokens", { ...next, stream: undefined, store: undefined });
    expect(counted.status).toBe(200);
    expect(await counted.json()).toEqual({ object: "response.input_tokens", input_tokens: 7 });
    const countedConversation = fake.counts[0]?.conversation;
    expect(countedConversation?.tools).toEqual(sent?.tools);
    expect(countedConversation?.referencedTools.map((t) => t.name)).toEqual(["mcp__docs.search"]);
    expect(countedConversation?.messages).toEqual(continued?.conversation?.messages);
  });

  it("refuses an input item type it does not know with a 400 naming it, before asking a worker", async () => {
    fake = execThenText();
    const input = [
      ...CODEX_DEFAULT_FIRST_INPUT,
      { type: "program", id: "p_1", call_id: "c", code: "", fingerprint: "" },
    ];
    const response = await post("/v1/responses", codexDefaultBody(input));
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { type: string; param: string; message: string } };
    expect(error).toMatchObject({ type: "invalid_request_error", param: `input.${input.length - 1}.type` });
    expect(error.message).toContain('Unsupported input item type "program"');
    const counted = await post("/v1/responses/input_tokens", { input });
    expect(counted.status).toBe(400);
    expect(fake.requests).toHaveLength(0);
    expect(fake.counts).toHaveLength(0);
    expect((await call("/v1/responses/input_tokens", { bearer: true })).status).toBe(405);
  });
});
