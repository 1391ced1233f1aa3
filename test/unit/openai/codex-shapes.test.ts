/**
 * What Codex CLI 0.169 sends by default, and what it expects back: namespace tools (calls returned
 * with their namespace), custom freeform tools (custom_tool_call / custom_tool_call_output), hosted
 * tools declared but not offered, and `reasoning.encrypted_content` sealed by Frontier.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  openReasoning,
  sealReasoning,
  unsealReasoningItems,
} from "../../../edge/protocols/responses/request/encrypted-reasoning.ts";
import { toConversation } from "../../../edge/protocols/responses/request/normalize.ts";
import type { OutputItem } from "../../../edge/protocols/responses/request/types.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { outputAsInput } from "../../../edge/protocols/responses/response/response-object.ts";
import { ResponsesTurn } from "../../../edge/protocols/responses/response/stream.ts";
import { GenerateEventSchema, StopReason } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { newSessionId } from "../../../shared/ids.ts";
import { APPLY_PATCH_LARK } from "../chat/codex-apply-patch.ts";
import { decodeSseText } from "./sse-text.ts";

type Init = MessageInitShape<typeof GenerateEventSchema>["event"];
const ev = (event: Init) => create(GenerateEventSchema, { event });
const SECRET = "unit-test-secret-0123456789";

/** Codex's tool declarations (descriptions shortened), as captured from `codex exec`. */
const CODEX_TOOLS = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a command",
    strict: false,
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  },
  {
    type: "namespace",
    name: "multi_agent_v1",
    description: "Tools for spawning and managing sub-agents.",
    tools: [
      {
        type: "function",
        name: "close_agent",
        description: "Close an agent",
        strict: false,
        parameters: { type: "object", properties: { target: { type: "string" } } },
      },
      {
        type: "function",
        name: "wait_agent",
        description: "Wait",
        strict: false,
        parameters: { type: "object", properties: {} },
      },
    ],
  },
  {
    type: "custom",
    name: "apply_patch",
    description: "FREEFORM patch",
    format: { type: "grammar", syntax: "lark", definition: APPLY_PATCH_LARK },
  },
  {
    type: "tool_search",
    execution: "client",
    description: "Searches tools",
    parameters: { type: "object", properties: {} },
  },
  { type: "web_search", external_web_access: false },
];

function codexRequest(extra: Record<string, unknown> = {}) {
  return validateResponsesRequest({
    model: "frontier-test",
    stream: true,
    store: false,
    include: ["reasoning.encrypted_content"],
    reasoning: { effort: "medium" },
    prompt_cache_key: "01a230f2-d30f-7ff3-b351-ebd4cadcbcb1",
    client_metadata: { "x-codex-installation-id": "x" },
    tool_choice: "auto",
    parallel_tool_calls: true,
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
    tools: CODEX_TOOLS,
    ...extra,
  });
}

async function runTurn(turn: ResponsesTurn, events: ReturnType<typeof ev>[]) {
  let sse = "";
  for (const event of events) for (const out of await turn.push(event)) sse += out.sse;
  return decodeSseText(sse) as { type: string; item?: OutputItem }[];
}

describe("Codex's tools", () => {
  it("offers namespace functions under <ns>.<name> and a custom tool as a raw-text wrapper; hosted ones are not offered", () => {
    const request = codexRequest();
    expect(request.tools.map((t) => t.name)).toEqual([
      "exec_command",
      "multi_agent_v1.close_agent",
      "multi_agent_v1.wait_agent",
      "apply_patch",
    ]);
    expect(request.tools_not_offered).toEqual(["tool_search"]);
    // web_search is a hosted tool the worker runs when it has a search provider.
    expect(request.server_tools.map((t) => [t.name, t.type])).toEqual([["web_search", "web_search"]]);
    expect(request.include_encrypted_reasoning).toBe(true);
    const conversation = toConversation(request, request.input);
    expect(conversation.tools.map((t) => t.name)).toEqual(request.tools.map((t) => t.name));
    expect(JSON.parse(conversation.tools[3]?.inputSchemaJson ?? "")).toMatchObject({ required: ["input"] });
    expect(conversation.tools[3]?.inputGrammar).toMatchObject({ syntax: "lark", definition: APPLY_PATCH_LARK });
    expect(conversation.tools[0]?.inputGrammar).toBeUndefined();
  });

  it("checks a custom tool's grammar: text stays free, unsupported Lark is a 400 naming the definition", () => {
    const custom = (format: unknown) => codexRequest({ tools: [{ type: "custom", name: "apply_patch", format }] });
    const text = custom({ type: "text" });
    expect(toConversation(text, text.input).tools[0]?.inputGrammar).toBeUndefined();
    const regex = custom({ type: "grammar", syntax: "regex", definition: "[a-z]+" });
    expect(toConversation(regex, regex.input).tools[0]?.inputGrammar).toMatchObject({ syntax: "regex" });
    expect(() => custom({ type: "grammar", syntax: "lark", definition: '%ignore " "\nstart: "a"' })).toThrow(
      /tools\.0\.format\.definition: Unsupported lark grammar: %ignore/,
    );
    expect(() => custom({ type: "grammar", syntax: "lark", definition: "start: begin_patch" })).toThrow(
      /tools\.0\.format\.definition:.*undefined 'begin_patch'/,
    );
    expect(() => custom({ type: "grammar", syntax: "ebnf", definition: "x" })).toThrow(/tools\.0\.format\.syntax/);
    expect(() => custom({ type: "json" })).toThrow(/tools\.0\.format\.type/);
  });

  it("still refuses hosted tools it cannot stand in for", () => {
    expect(() => codexRequest({ tools: [{ type: "code_interpreter" }] })).toThrow(/tools\.0\.type/);
  });

  it("returns a namespaced call with its namespace and a custom call as custom_tool_call with the raw input", async () => {
    const session = newSessionId();
    const turn = new ResponsesTurn(codexRequest(), {
      idSecret: SECRET,
      tenant: "local",
      sessionId: session,
      createdAt: 1,
    });
    const patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n";
    const events = await runTurn(turn, [
      ev({ case: "prompt", value: { promptTokens: 9, messageId: "resp_x" } }),
      ev({ case: "toolCallStart", value: { index: 0, id: "call_a", name: "multi_agent_v1.close_agent" } }),
      ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"target":"a"}' } }),
      ev({ case: "toolCallEnd", value: { index: 0 } }),
      ev({ case: "toolCallStart", value: { index: 1, id: "call_b", name: "apply_patch" } }),
      ev({ case: "toolCallDelta", value: { index: 1, argumentsJson: '{"input": ' } }),
      ev({ case: "toolCallDelta", value: { index: 1, argumentsJson: JSON.stringify(patch) } }),
      ev({ case: "toolCallDelta", value: { index: 1, argumentsJson: "}" } }),
      ev({ case: "toolCallEnd", value: { index: 1 } }),
      ev({ case: "stop", value: { reason: StopReason.TOOL_USE, usage: { outputTokens: 4 } } }),
    ]);
    const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
    expect(done[0]).toMatchObject({
      type: "function_call",
      name: "close_agent",
      namespace: "multi_agent_v1",
      call_id: "call_a",
      arguments: '{"target":"a"}',
    });
    expect(done[1]).toMatchObject({ type: "custom_tool_call", name: "apply_patch", call_id: "call_b", input: patch });
    expect(events.map((e) => e.type)).toContain("response.custom_tool_call_input.done");
    // The input streams as it arrives (here: with the second argument chunk), the deltas joining to it.
    const inputDeltas = events.filter((e) => e.type === "response.custom_tool_call_input.delta") as {
      delta?: string;
    }[];
    expect(inputDeltas.length).toBeGreaterThanOrEqual(1);
    expect(inputDeltas.map((e) => e.delta).join("")).toBe(patch);
    expect(turn.toolCallIds).toEqual(["call_a", "call_b"]);
    // A chained (store: true) record replays the calls under the names the model was offered.
    expect(outputAsInput(turn.body().output)).toMatchObject([
      { type: "function_call", name: "multi_agent_v1.close_agent", call_id: "call_a" },
      { type: "function_call", name: "apply_patch", arguments: JSON.stringify({ input: patch }) },
    ]);
  });

  it("reads Codex's replayed items back into the calls the model made", () => {
    const request = codexRequest({
      input: [
        { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
        {
          type: "function_call",
          id: "fc_1",
          status: "completed",
          name: "close_agent",
          namespace: "multi_agent_v1",
          arguments: "{}",
          call_id: "call_a",
        },
        {
          type: "custom_tool_call",
          id: "ctc_1",
          status: "completed",
          call_id: "call_b",
          name: "apply_patch",
          input: "*** Begin Patch\n",
        },
        { type: "function_call_output", id: "fco_1", call_id: "call_a", output: "ok" },
        { type: "custom_tool_call_output", id: "ctco_1", call_id: "call_b", output: "patch rejected" },
      ],
    });
    const conversation = toConversation(request, request.input);
    const [user, assistant, results] = conversation.messages;
    expect(user?.content).toHaveLength(1);
    expect(assistant?.content.map((c) => c.block.value)).toMatchObject([
      { id: "call_a", name: "multi_agent_v1.close_agent", inputJson: "{}" },
      { id: "call_b", name: "apply_patch", inputJson: JSON.stringify({ input: "*** Begin Patch\n" }) },
    ]);
    expect(results?.content.map((c) => c.block.value)).toMatchObject([
      { toolUseId: "call_a", content: "ok" },
      { toolUseId: "call_b", content: "patch rejected" },
    ]);
  });
});

describe("reasoning.encrypted_content", () => {
  it("seals the exact sampled reasoning for the tenant; another tenant, a tampered or a foreign blob does not open", async () => {
    const text = "Let me think… about ✓ and \u0000 bytes";
    const blob = await sealReasoning(SECRET, "local", text);
    expect(blob).toMatch(/^frv1\.[A-Za-z0-9_-]+$/);
    expect(blob).not.toContain("think");
    expect(await openReasoning(SECRET, "local", blob)).toBe(text);
    expect(await openReasoning(SECRET, "other", blob)).toBeUndefined();
    expect(await openReasoning("another-secret", "local", blob)).toBeUndefined();
    const flipped = blob.slice(0, -2) + (blob.at(-2) === "A" ? "B" : "A") + blob.at(-1);
    expect(await openReasoning(SECRET, "local", flipped)).toBeUndefined();
    expect(await openReasoning(SECRET, "local", "gAAAAABo-openai-blob")).toBeUndefined();
  });

  it("streams reasoning items carrying the blob, and a replay renders the sealed bytes, never a foreign blob's", async () => {
    const session = newSessionId();
    const turn = new ResponsesTurn(codexRequest(), {
      idSecret: SECRET,
      tenant: "local",
      sessionId: session,
      createdAt: 1,
    });
    const events = await runTurn(turn, [
      ev({ case: "prompt", value: { promptTokens: 9, messageId: "resp_x" } }),
      ev({ case: "thinkingDelta", value: { text: "exact " } }),
      ev({ case: "thinkingDelta", value: { text: "reasoning\n" } }),
      ev({ case: "thinkingEnd", value: { signature: "" } }),
      ev({ case: "textDelta", value: { text: "hi" } }),
      ev({ case: "stop", value: { reason: StopReason.END_TURN, usage: { outputTokens: 4 } } }),
    ]);
    const reasoning = events.find((e) => e.type === "response.output_item.done")?.item;
    if (reasoning?.type !== "reasoning") throw new Error("no reasoning item");
    expect(await openReasoning(SECRET, "local", reasoning.encrypted_content ?? "")).toBe("exact reasoning\n");

    // Codex replays it (store: false) with a visible text that may differ; the sealed bytes win.
    const replayed = [
      {
        type: "reasoning",
        id: reasoning.id,
        summary: [],
        content: [{ type: "reasoning_text", text: "exact reasoning" }],
        encrypted_content: reasoning.encrypted_content,
      },
      {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "someone else's" }],
        encrypted_content: "gAAAAABforeign",
      },
    ];
    const request = codexRequest({ input: replayed });
    const items = await unsealReasoningItems(SECRET, "local", request.input);
    const blocks = toConversation(request, items).messages[0]?.content.map((c) => c.block);
    expect(blocks?.[0]).toMatchObject({ case: "thinking", value: { thinking: "exact reasoning\n" } });
    expect(blocks?.[1]).toMatchObject({ case: "opaque", value: { type: "reasoning" } });
    expect(blocks?.[1]?.value).toHaveProperty("json", expect.stringContaining("gAAAAABforeign"));
  });

  it("leaves reasoning items without a blob when the client did not ask for it", async () => {
    const turn = new ResponsesTurn(codexRequest({ include: [] }), {
      idSecret: SECRET,
      tenant: "local",
      sessionId: newSessionId(),
      createdAt: 1,
    });
    const events = await runTurn(turn, [
      ev({ case: "prompt", value: { promptTokens: 9, messageId: "resp_x" } }),
      ev({ case: "thinkingDelta", value: { text: "r" } }),
      ev({ case: "stop", value: { reason: StopReason.END_TURN, usage: { outputTokens: 1 } } }),
    ]);
    const item = events.find((e) => e.type === "response.output_item.done")?.item;
    expect(item).not.toHaveProperty("encrypted_content");
  });
});
