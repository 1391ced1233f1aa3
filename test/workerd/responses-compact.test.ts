/**
 * Remote compaction through the real edge in workerd (fake worker): POST /v1/responses/compact runs
 * one summary turn (the conversation, then the summary request, no tools callable) and answers the
 * compacted history (user messages + one sealed `compaction` item); a /v1/responses request that
 * carries the item renders the summary as a user message in its place; a foreign, tampered or empty
 * request is a 400 in OpenAI's shape naming the field.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { CompactionResponse } from "../../edge/protocols/responses/compact/handler.ts";
import { COMPACTION_SUMMARY_HEADING, openCompaction } from "../../edge/protocols/responses/request/compaction-items.ts";
import { SUMMARY_REQUEST } from "../../edge/protocols/responses/request/summary-request.ts";
import {
  CacheDecision,
  Role,
  StopReason,
  ToolChoiceMode,
  type Message as WorkerMessage,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, OTHER_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

/** A worker that answers every turn with `text-<n>` (n counts its turns). */
function answersInTurn() {
  let n = 0;
  return installFakeWorker(async function* ({ request }) {
    n += 1;
    const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
    yield event({
      case: "prompt",
      value: { promptTokens: 50, cachedTokens: 40, messageId, decision: CacheDecision.COLD },
    });
    yield event({ case: "textDelta", value: { text: `text-${n}` } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage: { inputTokens: 50, outputTokens: 2 } } });
  });
}

const user = (text: string) => ({ type: "message", role: "user", content: text });
const LOOKUP = { type: "function", name: "lookup", parameters: { type: "object" } };
const CONVERSATION = [
  { type: "message", role: "user", content: [{ type: "input_text", text: "Find the word for a small river." }] },
  { type: "function_call", call_id: "call_foreign_1", name: "lookup", arguments: '{"word":"brook"}' },
  { type: "function_call_output", call_id: "call_foreign_1", output: "brook: a small stream" },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: "It is a brook." }] },
];

const textOf = (message: WorkerMessage) =>
  message.content.map((b) => (b.block.case === "text" ? b.block.value.text : "")).join("");

async function compact(body: Record<string, unknown>, key?: string) {
  const response = await call("/v1/responses/compact", { method: "POST", bearer: true, key, body });
  return {
    response,
    json: (await response.json()) as CompactionResponse & { error?: { param: string; type: string } },
  };
}

const compactionOf = (r: CompactionResponse) => {
  const item = r.output.at(-1);
  if (item?.type !== "compaction") throw new Error("no compaction item last");
  return item;
};

describe("POST /v1/responses/compact", () => {
  it("summarises the conversation in one turn and returns user messages plus a sealed compaction item", async () => {
    fake = answersInTurn();
    const { response, json } = await compact({
      model: "frontier-test",
      instructions: "You are a dictionary agent.",
      input: CONVERSATION,
      tools: [LOOKUP],
      parallel_tool_calls: true,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    expect(response.headers.get("x-frontier-cache")).toContain("decision=cold");
    expect(json.object).toBe("response.compaction");
    expect(json.id).toMatch(/^resp_/);
    expect(json.usage?.output_tokens).toBe(2);
    // The user's messages are kept, the rest is replaced by the summary.
    expect(json.output.length).toBe(2);
    expect(json.output[0]).toEqual({
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "Find the word for a small river." }],
    });
    const item = compactionOf(json);
    expect(item.id).toMatch(/^cmp_[0-9a-f]{24}$/);
    expect(item.encrypted_content.startsWith("frv1.")).toBe(true);
    expect(item.encrypted_content).not.toContain("text-1");
    expect(await openCompaction(SECRET, "local", item.encrypted_content)).toBe("text-1");
    expect(await openCompaction(SECRET, "other", item.encrypted_content)).toBeUndefined();

    // The summary turn: the whole conversation with the same tools, then the summary request, no tool callable.
    const turn = fake.requests[0]?.conversation;
    expect(turn?.system).toEqual(["You are a dictionary agent."]);
    expect(turn?.tools.map((t) => t.name)).toEqual(["lookup"]);
    expect(turn?.toolChoice?.mode).toBe(ToolChoiceMode.NONE);
    const last = turn?.messages.at(-1);
    expect(last?.role).toBe(Role.USER);
    expect(last && textOf(last)).toBe(SUMMARY_REQUEST);
    expect(fake.requests[0]?.sampling?.maxTokens).toBe(2048);
  });

  it("renders a compaction item as the summary in place of the history, and compacts a previous_response_id", async () => {
    fake = answersInTurn();
    const first = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      body: { model: "frontier-test", input: "Remember the number 41.", store: true },
    });
    const firstId = ((await first.json()) as { id: string }).id;
    const { response, json } = await compact({ model: "frontier-test", previous_response_id: firstId });
    expect(response.status).toBe(200);
    // The summary turn ran on the previous response's session.
    expect(fake.requests[1]?.sessionId).toBe(fake.requests[0]?.sessionId);
    const summaryTurnMessages = fake.requests[1]?.conversation?.messages ?? [];
    expect(summaryTurnMessages.map((m) => textOf(m))).toEqual(["Remember the number 41.", "text-1", SUMMARY_REQUEST]);
    expect(json.output.map((i) => i.type)).toEqual(["message", "compaction"]);

    const followUp = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      body: {
        model: "frontier-test",
        store: false,
        input: [...json.output, { type: "message", role: "user", content: "What was the number?" }],
      },
    });
    expect(followUp.status).toBe(200);
    // Consecutive user items are one user turn of text blocks (as for any Responses input).
    const rendered = (fake.requests[2]?.conversation?.messages ?? []).map((m) => [
      m.role,
      m.content.map((b) => (b.block.case === "text" ? b.block.value.text : b.block.case)),
    ]);
    expect(rendered).toEqual([
      [Role.USER, ["Remember the number 41.", `${COMPACTION_SUMMARY_HEADING}text-2`, "What was the number?"]],
    ]);
    expect(JSON.stringify(rendered)).not.toContain("frv1.");
  });

  it("refuses another tenant's, a tampered and a malformed compaction item, naming the field", async () => {
    fake = answersInTurn();
    const { json } = await compact({ model: "frontier-test", input: "hello" });
    const item = compactionOf(json);
    const followUp = (encrypted: unknown, key?: string) =>
      call("/v1/responses", {
        method: "POST",
        bearer: true,
        key,
        body: {
          model: "frontier-test",
          input: [
            { type: "message", role: "user", content: "hi" },
            { type: "compaction", encrypted_content: encrypted },
          ],
        },
      });
    const before = fake.requests.length;
    // One character in the middle changed (every bit of it is data; the last one may hold unused bits).
    const at = Math.floor(item.encrypted_content.length / 2);
    const sealed = item.encrypted_content;
    const tampered = `${sealed.slice(0, at)}${sealed[at] === "A" ? "B" : "A"}${sealed.slice(at + 1)}`;
    for (const [encrypted, key] of [
      [item.encrypted_content, OTHER_KEY],
      [tampered, undefined],
      ["plain text", undefined],
    ] as const) {
      const refused = await followUp(encrypted, key);
      expect(refused.status).toBe(400);
      const error = ((await refused.json()) as { error: { type: string; param: string; message: string } }).error;
      expect(error.type).toBe("invalid_request_error");
      expect(error.param).toBe("input.1.encrypted_content");
      expect(error.message).toContain("cannot be opened");
    }
    const missing = await followUp(undefined);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { param: string } }).error.param).toBe("input.1.encrypted_content");
    // None of them reached a worker; the tenant's own item does.
    expect(fake.requests.length).toBe(before);
    expect((await followUp(item.encrypted_content)).status).toBe(200);
  });

  it("refuses nothing to compact, a bad body and a missing key in OpenAI's shape", async () => {
    fake = answersInTurn();
    for (const body of [
      { model: "frontier-test", input: [] },
      { model: "frontier-test" },
      { model: "frontier-test", input: "" },
    ]) {
      const { response, json } = await compact(body);
      expect(response.status).toBe(400);
      expect(json.error?.type).toBe("invalid_request_error");
      expect(json.error?.param).toBe("input");
    }
    const noModel = await compact({ input: "hi" });
    expect(noModel.response.status).toBe(400);
    expect(noModel.json.error?.param).toBe("model");
    const unknownPrevious = await compact({ model: "frontier-test", previous_response_id: "resp_nope" });
    expect(unknownPrevious.response.status).toBe(404);
    const unauthenticated = await call("/v1/responses/compact", { method: "POST", key: null, body: { input: "hi" } });
    expect(unauthenticated.status).toBe(401);
    expect(((await unauthenticated.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
    expect(fake.requests.length).toBe(0);
  });
});

describe("remote compaction v2 (compaction_trigger on /v1/responses)", () => {
  it("streams the summary turn with exactly one compaction item, which a follow-up renders", async () => {
    fake = answersInTurn();
    const response = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      headers: { "x-codex-beta-features": "remote_compaction_v2", "session-id": crypto.randomUUID() },
      body: {
        model: "frontier-test",
        stream: true,
        store: false,
        include: ["reasoning.encrypted_content"],
        instructions: "You are a dictionary agent.",
        tools: [LOOKUP],
        input: [...CONVERSATION, { type: "compaction_trigger" }],
      },
    });
    expect(response.status).toBe(200);
    const events = (await response.text())
      .split("\n\n")
      .filter((block) => block.includes("data: "))
      .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)) as Record<string, unknown>);
    const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item as { type: string });
    expect(done.filter((item) => item.type === "compaction").length).toBe(1);
    const last = events.at(-1) as {
      type: string;
      response: { output: { type: string; encrypted_content?: string }[] };
    };
    expect(last.type).toBe("response.completed");
    expect(last.response.output.map((item) => item.type)).toEqual(["message", "compaction"]);
    const sealed = last.response.output[1]?.encrypted_content ?? "";
    expect(await openCompaction(SECRET, "local", sealed)).toBe("text-1");
    // Sequence numbers stay one run across the added item.
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const turn = fake.requests[0]?.conversation;
    expect(turn?.toolChoice?.mode).toBe(ToolChoiceMode.NONE);
    const request = turn?.messages.at(-1);
    expect(request && textOf(request)).toBe(SUMMARY_REQUEST);

    // Codex's replacement history: the user messages, then the compaction item.
    const followUp = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      body: {
        model: "frontier-test",
        store: false,
        instructions: "You are a dictionary agent.",
        tools: [LOOKUP],
        input: [CONVERSATION[0], { type: "compaction", encrypted_content: sealed }, user("Next?")],
      },
    });
    expect(followUp.status).toBe(200);
    const blocks = fake.requests[1]?.conversation?.messages.flatMap((m) =>
      m.content.map((b) => (b.block.case === "text" ? b.block.value.text : b.block.case)),
    );
    expect(blocks).toEqual(["Find the word for a small river.", `${COMPACTION_SUMMARY_HEADING}text-1`, "Next?"]);
  });

  it("refuses a compaction_trigger that is not the last input item", async () => {
    fake = answersInTurn();
    const response = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      body: { model: "frontier-test", input: [{ type: "compaction_trigger" }, user("hi")] },
    });
    expect(response.status).toBe(400);
    const error = ((await response.json()) as { error: { param: string; message: string } }).error;
    expect(error.param).toBe("input.0.type");
    expect(error.message).toContain("last input item");
    expect(fake.requests.length).toBe(0);
  });
});
