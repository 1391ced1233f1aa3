/**
 * The official OpenAI SDK (from npm) against the local stack's Responses API: a function-calling
 * loop continued by `previous_response_id` (suffix-only, proved by usage and the cache header),
 * streaming with `responses.stream().finalResponse()`, a Codex-style visible-prefix replay,
 * `store: false`, GET/DELETE, and the error shapes.
 */
import { readFileSync } from "node:fs";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import OpenAI from "openai";
import type { Response as OpenAiResponse, ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, inject, it } from "vitest";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import { WorkerService } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CAPABILITY_HEADER } from "../../shared/capability.ts";
import { verifyId } from "../../shared/ids.ts";
import { LOCAL_API_KEY, OTHER_TENANT_API_KEY } from "../support/api.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";
import { devCapability } from "../support/dev-capability.ts";

const DEV_ID_SECRET = "frontier-dev-id-secret-change-me";
const baseURL = `${inject("edgeUrl")}/v1`;
const client = new OpenAI({ baseURL, apiKey: LOCAL_API_KEY, maxRetries: 0 });
const other = new OpenAI({ baseURL, apiKey: OTHER_TENANT_API_KEY, maxRetries: 0 });

const lookup = {
  type: "function" as const,
  name: "lookup",
  description: "Look a word up",
  parameters: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
  strict: false,
};

/** Everything in the session's KV after a turn: its prompt plus what it sampled. */
const kvAfter = (r: OpenAiResponse) => (r.usage?.input_tokens ?? 0) + (r.usage?.output_tokens ?? 0);
/**
 * A turn that stopped on max tokens or end-of-generation sampled its last token without decoding
 * it: the next turn reuses all but that one token.
 */
const expectReusedAllOf = (next: OpenAiResponse, previous: OpenAiResponse) => {
  const cached = next.usage?.input_tokens_details.cached_tokens ?? 0;
  expect(cached).toBeGreaterThanOrEqual(kvAfter(previous) - 1);
  expect(cached).toBeLessThanOrEqual(kvAfter(previous));
};
const prefilled = (r: OpenAiResponse) =>
  (r.usage?.input_tokens ?? 0) - (r.usage?.input_tokens_details.cached_tokens ?? 0);
const calls = (r: OpenAiResponse) => r.output.filter((item) => item.type === "function_call");

function outputsFor(r: OpenAiResponse): ResponseInputItem[] {
  // Completion order: reversed relative to the calls.
  return calls(r)
    .reverse()
    .map((call) => ({
      type: "function_call_output" as const,
      call_id: call.call_id,
      output: `meaning of ${call.name}`,
    }));
}

async function firstToolTurn(extra: Partial<OpenAI.Responses.ResponseCreateParamsNonStreaming> = {}) {
  const first = await client.responses.create({
    model: "frontier-test",
    input: "Look up two words please.",
    instructions: "You are a dictionary agent.",
    tools: [lookup],
    tool_choice: "required",
    temperature: 0,
    max_output_tokens: 200,
    ...extra,
  });
  expect(first.status).toBe("completed");
  expect(calls(first).length).toBeGreaterThan(0);
  return first;
}

function workerClient() {
  const auth: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${DEV_WORKER_TOKEN}`);
    return next(request);
  };
  return createClient(WorkerService, createGrpcTransport({ baseUrl: inject("workerGrpcUrl"), interceptors: [auth] }));
}

describe("OpenAI Responses API through the openai SDK", () => {
  it("continues a function-calling loop with previous_response_id by prefilling only the suffix", async () => {
    const first = await firstToolTurn();
    expect(first.id).toMatch(/^resp_/);
    expect((await verifyId(DEV_ID_SECRET, first.id, "local"))?.kind).toBe("resp");
    for (const call of calls(first)) {
      expect((await verifyId(DEV_ID_SECRET, call.call_id, "local"))?.kind).toBe("call");
      expect((await verifyId(DEV_ID_SECRET, call.id ?? "", "local"))?.kind).toBe("fc");
      expect(() => JSON.parse(call.arguments)).not.toThrow();
    }
    // A first turn starts cold or from a prefix another conversation of the tenant shares (the same
    // system and tools: docs/operations/shared-prefixes.md), never from all of its input.
    expect(first.usage?.input_tokens_details.cached_tokens).toBeLessThan(first.usage?.input_tokens ?? 0);

    const { data: second, response: raw } = await client.responses
      .create({
        model: "frontier-test",
        previous_response_id: first.id,
        input: outputsFor(first),
        instructions: "You are a dictionary agent.",
        tools: [lookup],
        tool_choice: "none",
        temperature: 0,
        max_output_tokens: 12,
      })
      .withResponse();
    expect(raw.headers.get("x-frontier-cache")).toContain("decision=live-tool-ids");
    expect(raw.headers.get("x-request-id")).toMatch(/^req_/);
    expect(second.previous_response_id).toBe(first.id);
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(kvAfter(first));
    // Only the function outputs (and the turn markers around them) were prefilled.
    expect(prefilled(second)).toBeGreaterThan(0);
    expect(prefilled(second)).toBeLessThan((first.usage?.input_tokens ?? 0) / 3);
    const log = readFileSync(inject("workerLogFile"), "utf8");
    expect(log).toContain(`match=tool-output-ids ids=${calls(first).length}`);
    reportContinuedTurn(
      "function outputs",
      second.usage?.input_tokens ?? 0,
      second.usage?.input_tokens_details.cached_tokens ?? 0,
    );

    // The chain keeps going: a third turn on top of the second.
    const third = await client.responses.create({
      model: "frontier-test",
      previous_response_id: second.id,
      input: "Thanks. One more sentence.",
      instructions: "You are a dictionary agent.",
      tools: [lookup],
      temperature: 0,
      max_output_tokens: 8,
    });
    expectReusedAllOf(third, second);
  });

  it("replays the stored history when the worker lost the live state (the ladder's later rungs)", async () => {
    // Unique instructions: no other test's checkpoint shares this prefix, so nothing but the stored
    // records can rebuild the conversation.
    const instructions = `You are a dictionary agent ${crypto.randomUUID()}.`;
    const first = await firstToolTurn({ instructions });
    const session = (await verifyId(DEV_ID_SECRET, first.id, "local"))?.session ?? "";
    const headers = { [CAPABILITY_HEADER]: await devCapability(["release_session"], "local", session) };
    expect((await workerClient().releaseSession({ tenantId: "local", sessionId: session }, { headers })).released).toBe(
      true,
    );
    const { data: second, response: raw } = await client.responses
      .create({
        model: "frontier-test",
        previous_response_id: first.id,
        input: outputsFor(first),
        instructions,
        tools: [lookup],
        tool_choice: "none",
        max_output_tokens: 4,
      })
      .withResponse();
    expect(raw.headers.get("x-frontier-cache")).toContain("decision=cold; miss=no-live-state");
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(0);
    // Everything the first turn left in the KV, plus the outputs, was rebuilt and prefilled.
    expect(second.usage?.input_tokens).toBeGreaterThan(kvAfter(first));
  });

  it("streams: responses.stream().finalResponse(), ordered sequence numbers, and the stored record", async () => {
    const stream = client.responses.stream({
      model: "frontier-test",
      input: "Stream a reply",
      temperature: 0,
      max_output_tokens: 12,
    });
    const types: string[] = [];
    const sequence: number[] = [];
    stream.on("event", (event) => {
      types.push(event.type);
      sequence.push(event.sequence_number);
    });
    const final = await stream.finalResponse();
    expect(types[0]).toBe("response.created");
    expect(types[1]).toBe("response.in_progress");
    expect(types).toContain("response.output_text.delta");
    expect(types.at(-1)).toMatch(/^response\.(completed|incomplete)$/);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(final.output_text.length).toBeGreaterThan(0);
    const stored = await client.responses.retrieve(final.id);
    expect(stored.output_text).toBe(final.output_text);
    expect(stored.usage).toEqual(final.usage);
  });

  it("streams a function call turn and continues it by previous_response_id", async () => {
    const stream = client.responses.stream({
      model: "frontier-test",
      input: "Look up a word.",
      tools: [lookup],
      tool_choice: "required",
      temperature: 0,
      max_output_tokens: 200,
    });
    let argumentDeltas = 0;
    stream.on("response.function_call_arguments.delta", () => argumentDeltas++);
    const first = await stream.finalResponse();
    expect(argumentDeltas).toBeGreaterThan(0);
    const next = await client.responses.create({
      model: "frontier-test",
      previous_response_id: first.id,
      input: outputsFor(first),
      tools: [lookup],
      tool_choice: "none",
      max_output_tokens: 4,
    });
    expect(next.usage?.input_tokens_details.cached_tokens).toBe(kvAfter(first));
  });

  it("store: false keeps no record, and a Codex-style visible replay still continues the live state", async () => {
    const key = crypto.randomUUID();
    const first = await firstToolTurn({ store: false, prompt_cache_key: key });
    await expect(client.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: "m", previous_response_id: first.id, input: outputsFor(first) }),
    ).rejects.toMatchObject({ status: 404 });

    // The client replays the visible input itself, without reasoning and without item ids.
    const replay: ResponseInputItem[] = [
      { role: "user", content: "Look up two words please." },
      ...calls(first).map((call) => ({
        type: "function_call" as const,
        call_id: call.call_id,
        name: call.name,
        arguments: call.arguments,
      })),
      ...outputsFor(first),
    ];
    const { data: second, response: raw } = await client.responses
      .create({
        model: "frontier-test",
        input: replay,
        instructions: "You are a dictionary agent.",
        tools: [lookup],
        tool_choice: "none",
        store: false,
        prompt_cache_key: key,
        max_output_tokens: 8,
      })
      .withResponse();
    expect(raw.headers.get("x-frontier-cache")).toMatch(/decision=live-(tool-ids|text-prefix)/);
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(kvAfter(first));

    // A plain-text turn replayed by its visible text continues too.
    const visible = second.output_text;
    const { data: third, response: raw3 } = await client.responses
      .create({
        model: "frontier-test",
        input: [...replay, { role: "assistant", content: visible }, { role: "user", content: "And now?" }],
        instructions: "You are a dictionary agent.",
        tools: [lookup],
        tool_choice: "none",
        store: false,
        prompt_cache_key: key,
        max_output_tokens: 4,
      })
      .withResponse();
    expect(raw3.headers.get("x-frontier-cache")).toContain("decision=live-text-prefix");
    expectReusedAllOf(third, second);
  });

  it("retrieves and deletes stored responses; other tenants see nothing", async () => {
    const made = await client.responses.create({ model: "frontier-test", input: "Hi", max_output_tokens: 4 });
    expect((await client.responses.retrieve(made.id)).id).toBe(made.id);
    await expect(other.responses.retrieve(made.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      other.responses.create({ model: "m", previous_response_id: made.id, input: "steal" }),
    ).rejects.toMatchObject({ status: 404 });
    await client.responses.delete(made.id);
    await expect(client.responses.retrieve(made.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: "m", previous_response_id: made.id, input: "again" }),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe("Responses API errors (OpenAI's shape)", () => {
  const post = (body: unknown) =>
    fetch(`${baseURL}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${LOCAL_API_KEY}` },
      body: JSON.stringify(body),
    });

  it("404 not_found_error naming an unknown previous_response_id", async () => {
    const id = "resp_AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const res = await post({ model: "m", previous_response_id: id, input: "hi" });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      type: "not_found_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
    expect(body.error.message).toContain(id);
  });

  it("400 asking for the full input for an unknown call_id without its function_call", async () => {
    const res = await post({
      model: "m",
      tools: [lookup],
      input: [{ type: "function_call_output", call_id: "call_nope", output: "x" }],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "unknown_call_id" });
    expect(body.error.message).toContain("call_nope");
    expect(body.error.message).toContain("full input");
  });

  it("400 with the field path for invalid bodies, 401 for a bad key", async () => {
    const missing = await post({ model: "m" });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { param: string } }).error.param).toBe("input");
    const hosted = await post({ model: "m", input: "x", tools: [{ type: "file_search" }] });
    expect(hosted.status).toBe(400);
    expect(((await hosted.json()) as { error: { param: string } }).error.param).toBe("tools.0.type");
    const unauthorized = await fetch(`${baseURL}/responses`, {
      method: "POST",
      headers: { authorization: "Bearer wrong" },
      body: "{}",
    });
    expect(unauthorized.status).toBe(401);
    expect(((await unauthorized.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
  });
});
