/**
 * A GPU worker process SIGKILLed right after a tool turn — while its tool-frontier checkpoint is
 * scheduled, being dumped or being made durable — and a new worker on the same checkpoint directory:
 * the store opens, a tool-results-only request either continues live from the checkpoint or gets
 * the clear "send the full history" error naming the ID, and the replayed history is always served.
 * Killed once the write has landed, the next worker always continues live.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, describe, expect, it } from "vitest";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import {
  type ConversationSchema,
  GenerateRequestSchema,
  Role,
  StopReason,
  ToolChoiceMode,
  WorkerErrorCode,
  WorkerService,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { startWorker, stopChild, type WorkerHandle } from "../../scripts/stack.ts";
import { decisionWord } from "../../shared/cache-decision.ts";
import { CAPABILITY_HEADER } from "../../shared/capability.ts";
import { newSessionId } from "../../shared/ids.ts";
import { devCapability, devSessionIdKey } from "../support/dev-capability.ts";
import { testDataKey } from "../support/test-data-key.ts";
import { LOOKUP_TOOL } from "../support/worker-harness.ts";

const stateDir = mkdtempSync(join(tmpdir(), "frontier-crash-"));
const workers: WorkerHandle[] = [];

afterAll(async () => {
  for (const worker of workers) await stopChild(worker.process);
  rmSync(stateDir, { recursive: true, force: true });
});

async function worker(): Promise<WorkerHandle> {
  const started = await startWorker({
    FRONTIER_CONTEXT_SIZE: "8192",
    FRONTIER_SEQUENCES: "2",
    FRONTIER_STATE_DIR: join(stateDir, `worker-${workers.length}`),
    FRONTIER_CHECKPOINT_DIR: join(stateDir, "checkpoints"),
    // The write starts the moment the turn ends: the kill lands in or around it.
    FRONTIER_CHECKPOINT_DELAY_MS: "0",
  });
  workers.push(started);
  return started;
}

const auth: Interceptor = (next) => (request) => {
  request.header.set("authorization", `Bearer ${DEV_WORKER_TOKEN}`);
  return next(request);
};

interface Outcome {
  decision: string;
  stop: StopReason;
  toolUseIds: string[];
  toolCalls: { id: string; name: string; inputJson: string }[];
  error: { code: WorkerErrorCode; message: string } | undefined;
}

async function generate(
  target: WorkerHandle,
  sessionId: string,
  conversation: MessageInitShape<typeof ConversationSchema>,
): Promise<Outcome> {
  const client = createClient(WorkerService, createGrpcTransport({ baseUrl: target.grpcUrl, interceptors: [auth] }));
  const request = create(GenerateRequestSchema, {
    requestId: `crash-${Math.random().toString(36).slice(2, 8)}`,
    tenantId: "local",
    sessionId,
    tenantDataKey: testDataKey("local").bytes,
    sessionIdKey: await devSessionIdKey("local", sessionId),
    conversation,
    sampling: { maxTokens: 200, temperature: 0 },
    idKinds: { message: "msg", toolCall: "toolu" },
  });
  const out: Outcome = { decision: "", stop: StopReason.UNSPECIFIED, toolUseIds: [], toolCalls: [], error: undefined };
  const headers = {
    [CAPABILITY_HEADER]: await devCapability(["generate"], "local", sessionId, { workerId: target.id }),
  };
  for await (const { event } of client.generate(request, { headers })) {
    if (event.case === "prompt") out.decision = decisionWord(event.value.decision);
    else if (event.case === "toolCallStart")
      out.toolCalls.push({ id: event.value.id, name: event.value.name, inputJson: "" });
    else if (event.case === "toolCallDelta") {
      const call = out.toolCalls[event.value.index];
      if (call) call.inputJson += event.value.argumentsJson;
    } else if (event.case === "stop") out.stop = event.value.reason;
    else if (event.case === "error") out.error = { code: event.value.code, message: event.value.message };
  }
  out.toolUseIds = out.toolCalls.map((c) => c.id);
  return out;
}

const system = [`You are the crash test agent. ${"Look words up with the tool. ".repeat(80)}`];
const forced = { mode: ToolChoiceMode.ANY, disableParallelToolUse: true };
const user = (text: string) => ({ role: Role.USER, content: [{ block: { case: "text" as const, value: { text } } }] });
const results = (ids: string[]) => ({
  role: Role.USER,
  content: ids.map((id) => ({
    block: { case: "toolResult" as const, value: { toolUseId: id, content: "a word", isError: false } },
  })),
});

async function kill(target: WorkerHandle): Promise<void> {
  const exited = new Promise((resolve) => target.process.once("exit", resolve));
  target.process.kill("SIGKILL");
  await exited;
}

describe("a worker killed around its tool-frontier checkpoint write", () => {
  it("killed as the turn ends: the next worker continues from the checkpoint or cleanly asks for the history", async () => {
    const first = await worker();
    const sessionId = newSessionId();
    const turn = await generate(first, sessionId, {
      system,
      tools: [LOOKUP_TOOL],
      toolChoice: forced,
      messages: [user("alpha")],
    });
    expect(turn.error).toBeUndefined();
    expect(turn.stop).toBe(StopReason.TOOL_USE);
    await kill(first);

    const next = await worker();
    const resultsOnly = await generate(next, sessionId, {
      system,
      tools: [LOOKUP_TOOL],
      toolChoice: forced,
      messages: [results(turn.toolUseIds)],
    });
    if (resultsOnly.error) {
      expect(resultsOnly.error.code).toBe(WorkerErrorCode.UNKNOWN_TOOL_USE_ID);
      expect(resultsOnly.error.message).toContain(turn.toolUseIds[0]);
    } else {
      expect(resultsOnly.decision).toBe("live-tool-ids");
    }
    // The replayed history is always served (from the checkpoint, the anchor, or cold).
    const replay = await generate(next, newSessionId(), {
      system,
      tools: [LOOKUP_TOOL],
      toolChoice: forced,
      messages: [
        user("alpha"),
        {
          role: Role.ASSISTANT,
          content: turn.toolCalls.map((c) => ({
            block: { case: "toolUse" as const, value: { id: c.id, name: c.name, inputJson: c.inputJson } },
          })),
        },
        results(turn.toolUseIds),
      ],
    });
    expect(replay.error).toBeUndefined();
    expect(replay.stop).toBe(StopReason.TOOL_USE);
  });

  it("killed after the write landed: the next worker continues live from it", async () => {
    const first = await worker();
    const sessionId = newSessionId();
    const turn = await generate(first, sessionId, {
      system,
      tools: [LOOKUP_TOOL],
      toolChoice: forced,
      messages: [user("beta")],
    });
    expect(turn.stop).toBe(StopReason.TOOL_USE);
    const landed = async () => {
      for (let i = 0; i < 200; i++) {
        if (
          first.logs.some(
            (l) => l.includes(`session=${sessionId.slice(0, 8)}`) && /checkpoint saved reason=tool-frontier/.test(l),
          )
        )
          return true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return false;
    };
    expect(await landed()).toBe(true);
    await kill(first);

    const next = await worker();
    const resultsOnly = await generate(next, sessionId, {
      system,
      tools: [LOOKUP_TOOL],
      toolChoice: forced,
      messages: [results(turn.toolUseIds)],
    });
    expect(resultsOnly.error).toBeUndefined();
    expect(resultsOnly.decision).toBe("live-tool-ids");
    expect(next.logs.some((l) => /kv cache hit checkpoint reason=tool-frontier/.test(l))).toBe(true);
  });
});
