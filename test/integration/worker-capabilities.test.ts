/**
 * Issue 30, H3, against a real worker process and the real edge: the worker token alone reaches
 * nobody. A call with a valid token but a capability for tenant-a that names tenant-b is refused
 * before the worker touches anything (no cache probe of tenant-b); ReleaseSession without a
 * capability naming exactly that session is refused; and the worker holds no secret an ID the edge
 * accepts could be minted with (its config has no ID secret; IDs made with anything it holds, or
 * with one session's key for another session, are rejected by the edge).
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, inject, it } from "vitest";
import { DEV_WORKER_TOKEN, loadConfig } from "../../gpu-worker/config.ts";
import { GenerateRequestSchema, Role, WorkerService } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CAPABILITY_HEADER } from "../../shared/capability.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { mintId, mintIdWithSessionKey, newSessionId, verifyId } from "../../shared/ids.ts";
import { postJson, randomHint } from "../support/api.ts";
import { DEV_WORKER_ID, devCapability, devSessionIdKey } from "../support/dev-capability.ts";

const token: Interceptor = (next) => (request) => {
  request.header.set("authorization", `Bearer ${DEV_WORKER_TOKEN}`);
  return next(request);
};
const worker = createClient(
  WorkerService,
  createGrpcTransport({ baseUrl: inject("workerGrpcUrl"), interceptors: [token] }),
);
const messagesUrl = `${inject("edgeUrl")}/v1/messages`;

async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    return Code[ConnectError.from(error).code];
  }
}

/** Drain a Generate stream: its event kinds, or the error code that ended it. */
async function generate(
  request: ReturnType<typeof create<typeof GenerateRequestSchema>>,
  headers: Record<string, string>,
): Promise<{ events: string[]; code: string }> {
  const events: string[] = [];
  try {
    for await (const { event } of worker.generate(request, { headers })) events.push(event.case ?? "");
    return { events, code: "ok" };
  } catch (error) {
    return { events, code: Code[ConnectError.from(error).code] };
  }
}

function turnFor(tenantId: string, sessionId: string, sessionIdKey: Uint8Array) {
  return create(GenerateRequestSchema, {
    requestId: `cap-${Math.random().toString(36).slice(2, 8)}`,
    tenantId,
    sessionId,
    sessionIdKey,
    idKinds: { message: "msg", toolCall: "toolu", serverToolCall: "srvtoolu" },
    conversation: {
      system: ["You are terse."],
      messages: [{ role: Role.USER, content: [{ block: { case: "text", value: { text: "hi" } } }] }],
    },
    sampling: { maxTokens: 2, temperature: 0 },
  });
}

/** A real session of tenant `local`, made through the edge; its session id from the message ID. */
async function edgeSession(): Promise<string> {
  const res = await postJson(
    messagesUrl,
    { model: "frontier-test", max_tokens: 4, messages: [{ role: "user", content: "Hello" }] },
    { headers: { "x-claude-code-session-id": randomHint() } },
  );
  expect(res.status).toBe(200);
  const body = (await res.json()) as { id: string };
  const decoded = await verifyId(DEV_ID_SECRET, body.id, "local");
  expect(decoded?.kind).toBe("msg");
  return decoded?.session ?? "";
}

describe("per-request capabilities on a real worker", () => {
  it("refuses a Generate naming tenant-b under a capability for tenant-a, before any event", async () => {
    const session = newSessionId();
    const forA = await devCapability(["generate"], "tenant-a", session);
    const asB = turnFor("tenant-b", session, await devSessionIdKey("tenant-b", session));
    const refused = await generate(asB, { [CAPABILITY_HEADER]: forA });
    expect(refused).toEqual({ events: [], code: "PermissionDenied" });
    // The token with no capability at all is refused from the headers.
    expect((await generate(asB, {})).code).toBe("PermissionDenied");
    // A capability for another session of tenant-b, or for another worker, is refused too.
    const otherSession = await devCapability(["generate"], "tenant-b", newSessionId());
    expect((await generate(asB, { [CAPABILITY_HEADER]: otherSession })).code).toBe("PermissionDenied");
    const otherWorker = await devCapability(["generate"], "tenant-b", session, { workerId: "worker-9" });
    expect((await generate(asB, { [CAPABILITY_HEADER]: otherWorker })).code).toBe("PermissionDenied");
    // The capability the edge would send for tenant-b's session runs the turn.
    const forB = await devCapability(["generate"], "tenant-b", session);
    const served = await generate(asB, { [CAPABILITY_HEADER]: forB });
    expect(served.code).toBe("ok");
    expect(served.events).toContain("prompt");
    expect(served.events.at(-1)).toBe("stop");
  });

  it("refuses ReleaseSession unless the capability names exactly that tenant and session", async () => {
    const session = await edgeSession();
    const release = (headers: Record<string, string>, tenantId = "local") =>
      worker.releaseSession({ tenantId, sessionId: session }, { headers });
    expect(await codeOf(release({}))).toBe("PermissionDenied");
    const cases = [
      await devCapability(["release_session"], "local", newSessionId()),
      await devCapability(["release_session"], "other", session),
      await devCapability(["generate"], "local", session),
      await devCapability(["release_session"], "local", session, { ttlSeconds: -5 }),
    ];
    for (const value of cases) expect(await codeOf(release({ [CAPABILITY_HEADER]: value }))).toBe("PermissionDenied");
    // None of those released it: the session is still resident for the capability that names it.
    const exact = await devCapability(["release_session"], "local", session);
    // A session whose checkpoint write is in flight is not released yet (SessionTable.drop): the turn's
    // own checkpoint may still be saving on a loaded machine, so ask again until it has settled.
    await expect
      .poll(async () => (await release({ [CAPABILITY_HEADER]: exact })).released, { timeout: 10_000, interval: 200 })
      .toBe(true);
  });

  it("the worker holds no ID secret: IDs minted with what it holds are rejected by the edge", async () => {
    const config = loadConfig({ FRONTIER_DEV: "1", FRONTIER_WORKER_ID: DEV_WORKER_ID });
    expect(Object.keys(config).filter((k) => /id.?secret/i.test(k))).toEqual([]);
    const session = await edgeSession();
    const held = [config.workerToken, Buffer.from(config.capabilityKey).toString("base64url"), config.poolToken];
    for (const secret of held) {
      if (!secret) continue;
      expect(await verifyId(DEV_ID_SECRET, await mintId(secret, "toolu", "local", session), "local")).toBeUndefined();
    }
    expect(
      await verifyId(DEV_ID_SECRET, await mintIdWithSessionKey(config.capabilityKey, "toolu", session), "local"),
    ).toBeUndefined();
    // The one ID key a worker is handed mints IDs for its own session only.
    const own = await devSessionIdKey("local", session);
    expect((await verifyId(DEV_ID_SECRET, await mintIdWithSessionKey(own, "toolu", session), "local"))?.session).toBe(
      session,
    );
    const elsewhere = newSessionId();
    const forged = await mintIdWithSessionKey(own, "toolu", elsewhere);
    expect(await verifyId(DEV_ID_SECRET, forged, "local")).toBeUndefined();
    expect(await verifyId(DEV_ID_SECRET, await mintIdWithSessionKey(own, "toolu", session), "other")).toBeUndefined();
    // And the edge itself treats such an ID as unknown: tool results for it, without a replay, are a 400.
    const forgedWithCapabilityKey = await mintIdWithSessionKey(config.capabilityKey, "toolu", session);
    for (const id of [forged, forgedWithCapabilityKey]) {
      const res = await postJson(messagesUrl, {
        model: "frontier-test",
        max_tokens: 4,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "42" }] }],
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    }
  });
});
