import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { hintSessionId } from "../../edge/session/routing.ts";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { event, type FakeWorker, installFakeWorker, sleep } from "./fake-worker.ts";
import { call, messagesBody, OTHER_KEY } from "./helpers.ts";

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

function endTurn() {
  return installFakeWorker(function* () {
    yield event({ case: "prompt", value: { promptTokens: 5, messageId: "msg_h" } });
    yield event({ case: "textDelta", value: { text: "hi" } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
  });
}

async function send(hint: string, body: Record<string, unknown>, key?: string) {
  const response = await call("/v1/messages", {
    method: "POST",
    body,
    headers: { "x-claude-code-session-id": hint },
    key,
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
  await sleep(20);
  return response.headers.get("x-frontier-route");
}

describe("routing by x-claude-code-session-id", () => {
  it("claims the hinted session, branches other first turns, continues plain follow-ups", async () => {
    fake = endTurn();
    const hint = crypto.randomUUID();
    const hinted = await hintSessionId("local", hint);
    expect(await send(hint, messagesBody())).toBe("hint; epoch=1");
    expect(fake.requests[0]?.sessionId).toBe(hinted);

    // A second first turn with the same hint (a subagent, a parallel benchmark client) is a branch.
    expect(await send(hint, messagesBody())).toBe("branch; epoch=1");
    const branch = fake.requests[1]?.sessionId;
    expect(branch).not.toBe(hinted);
    const [main, branched] = await Promise.all([
      env.SESSIONS.getByName(hinted).get("local"),
      env.SESSIONS.getByName(branch ?? "").get("local"),
    ]);
    expect(branched?.workerUrl).toBe(main?.workerUrl);

    // A plain multi-turn follow-up (no IDs anywhere) continues the hinted session.
    const followUp = messagesBody({
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hi" },
        { role: "user", content: "more" },
      ],
    });
    expect(await send(hint, followUp)).toBe("hint; epoch=1");
    expect(fake.requests[2]?.sessionId).toBe(hinted);
    expect((await env.SESSIONS.getByName(hinted).get("local"))?.turns).toBe(2);
  });

  it("branches a side request with its own system prompt and tools, and leaves the main session alone", async () => {
    fake = endTurn();
    const hint = crypto.randomUUID();
    const hinted = await hintSessionId("local", hint);
    const main = { system: "You are the main agent.", tools: [{ name: "Bash", input_schema: { type: "object" } }] };
    expect(await send(hint, messagesBody(main))).toBe("hint; epoch=1");
    const history = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hi" },
      { role: "user", content: "more" },
    ];
    // A title request / memory subagent: the same hint and history, another system prompt and no tools.
    const side = messagesBody({ system: "Write a title.", messages: history });
    expect(await send(hint, side)).toBe("branch; epoch=1");
    const sideSession = fake.requests[1]?.sessionId;
    expect(sideSession).not.toBe(hinted);
    // The next side request of the same kind lands in the same side session, on the same worker.
    expect(await send(hint, side)).toBe("branch; epoch=1");
    expect(fake.requests[2]?.sessionId).toBe(sideSession);
    const [mainInfo, sideInfo] = await Promise.all([
      env.SESSIONS.getByName(hinted).get("local"),
      env.SESSIONS.getByName(sideSession ?? "").get("local"),
    ]);
    expect(sideInfo?.workerUrl).toBe(mainInfo?.workerUrl);
    expect(sideInfo?.turns).toBe(2);
    // The main conversation's follow-up still continues the hinted session, untouched by the side turns.
    expect(mainInfo?.turns).toBe(1);
    expect(await send(hint, messagesBody({ ...main, messages: history }))).toBe("hint; epoch=1");
    expect(fake.requests[3]?.sessionId).toBe(hinted);
  });

  it("gives another tenant with the same hint a different session", async () => {
    fake = endTurn();
    const hint = crypto.randomUUID();
    await send(hint, messagesBody());
    await send(hint, messagesBody(), OTHER_KEY);
    expect(fake.requests[0]?.sessionId).toBe(await hintSessionId("local", hint));
    expect(fake.requests[1]?.sessionId).toBe(await hintSessionId("other", hint));
    expect(fake.requests[1]?.tenantId).toBe("other");
    expect(await env.SESSIONS.getByName(await hintSessionId("local", hint)).get("other")).toBeNull();
  });

  it("forwards unknown tool_result ids to a new session (the worker then answers UNKNOWN_TOOL_USE_ID)", async () => {
    fake = endTurn();
    // A system prompt of its own: no worker holds its prefix (the hinted turns above placed theirs).
    const body = messagesBody({
      system: "A prompt no other test sends.",
      messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01NotOurs", content: "ok" }] }],
    });
    const response = await call("/v1/messages", { method: "POST", body });
    expect(response.headers.get("x-frontier-route")).toBe("new; epoch=1; placement=load");
    await response.arrayBuffer();
    expect(fake.requests).toHaveLength(1);
  });
});
