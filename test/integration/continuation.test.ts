/**
 * Live continuation over real sockets with the real engine: suffix-only prefill keyed on the
 * tool-result IDs, equality with a cold prefill of the same prompt, the 400 for unknown IDs,
 * tenant isolation, and special-token text staying text.
 */
import { create } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, inject, it } from "vitest";
import { DEV_ID_SECRET, DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import { ReleaseSessionRequestSchema, WorkerService } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CAPABILITY_HEADER } from "../../shared/capability.ts";
import { verifyId } from "../../shared/ids.ts";
import { OTHER_TENANT_API_KEY, postJson, randomHint } from "../support/api.ts";
import { devCapability } from "../support/dev-capability.ts";

/** The worker requires the shared worker token on every call (dev default here). */
const workerAuth: Interceptor = (next) => (request) => {
  request.header.set("authorization", `Bearer ${process.env.FRONTIER_WORKER_TOKEN || DEV_WORKER_TOKEN}`);
  return next(request);
};

const messagesUrl = `${inject("edgeUrl")}/v1/messages`;
const worker = createClient(
  WorkerService,
  createGrpcTransport({ baseUrl: inject("workerGrpcUrl"), interceptors: [workerAuth] }),
);

interface Message {
  content: { type: string; id?: string; text?: string; input?: unknown }[];
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number };
}

const tool = {
  name: "lookup",
  description: "Look a word up",
  input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};
const firstUser = { role: "user", content: "Look up two words please." };

async function firstTurn(hint: string): Promise<{ body: Message; ids: string[] }> {
  const res = await postJson(
    messagesUrl,
    { model: "m", max_tokens: 200, temperature: 0, tools: [tool], tool_choice: { type: "any" }, messages: [firstUser] },
    { headers: { "x-claude-code-session-id": hint } },
  );
  expect(res.status).toBe(200);
  const body = (await res.json()) as Message;
  const ids = body.content.filter((b) => b.type === "tool_use").map((b) => b.id ?? "");
  expect(ids.length).toBeGreaterThan(0);
  return { body, ids };
}

function results(ids: string[]) {
  // Completion order: reversed relative to the calls.
  return {
    role: "user",
    content: [...ids]
      .reverse()
      .map((id) => ({ type: "tool_result", tool_use_id: id, content: `result for ${id.slice(-4)}` })),
  };
}

describe("live continuation keyed on tool-result IDs", () => {
  it("prefills only the suffix, and greedy output equals a cold prefill of the same prompt", async () => {
    const hint = randomHint();
    const { body: first, ids } = await firstTurn(hint);
    const second = {
      model: "m",
      max_tokens: 24,
      temperature: 0,
      tools: [tool],
      messages: [firstUser, { role: "assistant", content: first.content }, results(ids)],
    };
    const liveRes = await postJson(messagesUrl, second, { headers: { "x-claude-code-session-id": hint } });
    expect(liveRes.headers.get("x-frontier-cache")).toContain("decision=live-tool-ids");
    const live = (await liveRes.json()) as Message;
    const firstKv = first.usage.input_tokens + first.usage.cache_read_input_tokens + first.usage.output_tokens;
    expect(live.usage.cache_read_input_tokens).toBe(firstKv);

    // Drop the live KV, then send the same request: the worker must prefill it all (exact turn
    // memory still renders the sampled bytes, so the prompt is identical) and, greedily, produce
    // the same tokens.
    const session = await verifyId(DEV_ID_SECRET, ids[0] ?? "", "local");
    expect(session).toBeDefined();
    const sessionId = session?.session ?? "";
    const capability = await devCapability(["release_session"], "local", sessionId);
    const released = await worker.releaseSession(
      create(ReleaseSessionRequestSchema, { tenantId: "local", sessionId }),
      {
        headers: { [CAPABILITY_HEADER]: capability },
      },
    );
    expect(released.released).toBe(true);
    const coldRes = await postJson(messagesUrl, second, { headers: { "x-claude-code-session-id": hint } });
    expect(coldRes.headers.get("x-frontier-cache")).toContain("decision=cold");
    const cold = (await coldRes.json()) as Message;
    expect(cold.usage.cache_read_input_tokens).toBe(0);
    expect(cold.usage.input_tokens).toBe(live.usage.input_tokens + live.usage.cache_read_input_tokens);
    expect(cold.content).toEqual(live.content);
    expect(cold.usage.output_tokens).toBe(live.usage.output_tokens);
  });

  it("continues a tool-results-only request (no replay) from the live frontier", async () => {
    const hint = randomHint();
    const { body: first, ids } = await firstTurn(hint);
    const res = await postJson(messagesUrl, {
      model: "m",
      max_tokens: 4,
      tools: [tool],
      messages: [results(ids)],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-frontier-cache")).toContain("decision=live-tool-ids");
    const body = (await res.json()) as Message;
    const firstKv = first.usage.input_tokens + first.usage.cache_read_input_tokens + first.usage.output_tokens;
    expect(body.usage.cache_read_input_tokens).toBe(firstKv);
  });

  it("answers 400 naming an unknown ID in a tool-results-only request", async () => {
    const forged = "toolu_AQEjRWeJq83vASNFZ4mrze_tlYCJj2Q9oNlQcPv4DCIXmXw";
    const res = await postJson(messagesUrl, {
      model: "m",
      max_tokens: 4,
      messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: forged, content: "x" }] }],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain(forged);
    expect(body.error.message).toContain("full messages history");
  });

  it("treats another tenant's live IDs exactly like unknown IDs", async () => {
    const { ids } = await firstTurn(randomHint());
    const id = ids[0] ?? "";
    const res = await postJson(
      messagesUrl,
      {
        model: "m",
        max_tokens: 4,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "x" }] }],
      },
      { headers: { "x-api-key": OTHER_TENANT_API_KEY } },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain(id);
  });

  it("serves a full replay whose IDs have no live state", async () => {
    const { body: first, ids } = await firstTurn(randomHint());
    const replay = {
      model: "m",
      max_tokens: 4,
      tools: [tool],
      messages: [firstUser, { role: "assistant", content: first.content }, results(ids)],
    };
    const res = await postJson(messagesUrl, replay, { headers: { "x-api-key": OTHER_TENANT_API_KEY } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-frontier-cache")).toContain("decision=cold");
  });

  it("keeps user text that spells control tokens as plain text", async () => {
    const count = async (content: string) => {
      const res = await postJson(`${messagesUrl}/count_tokens`, { model: "m", messages: [{ role: "user", content }] });
      return ((await res.json()) as { input_tokens: number }).input_tokens;
    };
    const plain = await count("x");
    // As a control token "<|im_end|>" would be 1 token; as text it is one token per byte here.
    expect(await count("<|im_end|>")).toBeGreaterThan(plain + 5);
  });
});
