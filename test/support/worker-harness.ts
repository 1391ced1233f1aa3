/**
 * An in-process GPU worker for engine-tier tests: the real engine (tiny model), the real turn
 * runner, session table and checkpoint store — everything but the sockets.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ChatMlFormat } from "../../gpu-worker/chat/families/qwen/chatml.ts";
import type { ChatFormat } from "../../gpu-worker/chat/types.ts";
import { SessionCheckpoints } from "../../gpu-worker/checkpoints/session-checkpoints.ts";
import type { CheckpointStorage } from "../../gpu-worker/checkpoints/store/checkpoint-storage.ts";
import { CheckpointStore } from "../../gpu-worker/checkpoints/store/checkpoint-store.ts";
import { loadConfig } from "../../gpu-worker/config.ts";
import type { SharedPrefixOptions } from "../../gpu-worker/continuation/shared-prefix/options.ts";
import { SpanTokenMemory } from "../../gpu-worker/continuation/span-token-memory.ts";
import { TurnMemory } from "../../gpu-worker/continuation/turn-memory.ts";
import { SessionTable } from "../../gpu-worker/session/session-table.ts";
import { rememberTurn } from "../../gpu-worker/turn/record.ts";
import { runTurn } from "../../gpu-worker/turn/run-turn.ts";
import { SharedPrefixes } from "../../gpu-worker/turn/shared-prefix/shared-prefixes.ts";
import type { TurnDeps } from "../../gpu-worker/turn/turn.ts";
import type { Engine } from "../../native/engine-types.ts";
import {
  type ConversationSchema,
  GenerateRequestSchema,
  MissReason,
  Role,
  StopReason,
  ToolChoiceMode,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { decisionWord, missWord } from "../../shared/cache-decision.ts";
import { newSessionId } from "../../shared/ids.ts";
import { devSessionIdKey } from "./dev-capability.ts";
import { testDataKey } from "./test-data-key.ts";

export interface TurnOutcome {
  decision: string;
  missReason: string;
  promptTokens: number;
  cachedTokens: number;
  text: string;
  toolCalls: { id: string; name: string; argumentsJson: string }[];
  stop: StopReason;
  /** Tokens sampled (the stop event's usage). */
  outputTokens: number;
  error: string | undefined;
}

export class WorkerHarness {
  readonly deps: TurnDeps;
  readonly store: CheckpointStore;

  constructor(
    readonly engine: Engine,
    readonly dir: string,
    options: {
      anchorMinTokens?: number;
      budgetBytes?: number;
      maxQueue?: number;
      format?: ChatFormat;
      /** Delay of tool-frontier writes (default 0 here: tests that `settle` need not wait). */
      checkpointDelayMs?: number;
      /** Wrap the store the worker writes through (e.g. to hold a write at a chosen step). */
      wrapStorage?: (store: CheckpointStore) => CheckpointStorage;
      /** The test-only sampling policy (`scripted-tools`: a plain-text answer after tool results). */
      testPolicy?: "scripted-tools";
      /** The shared-prefix rungs' settings over the worker's defaults; false turns them off. */
      sharedPrefix?: Partial<SharedPrefixOptions> | false;
    } = {},
  ) {
    const env = { FRONTIER_DEV: "1", ...(options.testPolicy ? { FRONTIER_TEST_POLICY: options.testPolicy } : {}) };
    const config = { ...loadConfig(env), contextSize: 4096, batchSize: 256 };
    const memory = new TurnMemory();
    const spans = new SpanTokenMemory();
    this.store = CheckpointStore.open({
      dir,
      budgetBytes: options.budgetBytes ?? 512 * 1024 * 1024,
      modelIdentity: engine.model.identity,
    });
    const checkpoints = new SessionCheckpoints(
      options.wrapStorage ? options.wrapStorage(this.store) : this.store,
      { anchorMinTokens: options.anchorMinTokens ?? 1_000_000 },
      (tenant, turn) => rememberTurn({ memory, spans }, tenant, turn),
      memory,
    );
    const sessions = new SessionTable(engine, checkpoints, {
      maxQueue: options.maxQueue ?? 64,
      checkpointDelayMs: options.checkpointDelayMs ?? 0,
    });
    const format = options.format ?? new ChatMlFormat();
    const shared =
      options.sharedPrefix === false
        ? undefined
        : new SharedPrefixes({ ...config.sharedPrefix, ...options.sharedPrefix }, engine.model.identity);
    if (shared) checkpoints.onStored = (key, meta, tokens) => shared.holdCheckpoint(key, meta, tokens);
    this.deps = { engine, format, sessions, memory, spans, checkpoints, config, shared };
  }

  async turn(
    tenant: string,
    sessionId: string,
    conversation: MessageInitShape<typeof ConversationSchema>,
    maxTokens = 200,
  ): Promise<TurnOutcome> {
    const request = create(GenerateRequestSchema, {
      requestId: `t-${Math.random().toString(36).slice(2, 8)}`,
      tenantId: tenant,
      sessionId,
      tenantDataKey: testDataKey(tenant).bytes,
      sessionIdKey: await devSessionIdKey(tenant, sessionId),
      idKinds: { message: "msg", toolCall: "toolu" },
      conversation,
      sampling: { maxTokens, temperature: 0 },
    });
    const out: TurnOutcome = {
      decision: "",
      missReason: "",
      promptTokens: 0,
      cachedTokens: 0,
      text: "",
      toolCalls: [],
      stop: StopReason.UNSPECIFIED,
      outputTokens: 0,
      error: undefined,
    };
    for await (const event of runTurn(this.deps, request, new AbortController().signal)) {
      const e = event.event;
      if (e.case === "prompt")
        Object.assign(out, {
          decision: decisionWord(e.value.decision),
          missReason: e.value.missReason === MissReason.NONE ? "" : missWord(e.value.missReason),
          promptTokens: e.value.promptTokens,
          cachedTokens: e.value.cachedTokens,
        });
      else if (e.case === "textDelta") out.text += e.value.text;
      else if (e.case === "toolCallStart")
        out.toolCalls.push({ id: e.value.id, name: e.value.name, argumentsJson: "" });
      else if (e.case === "toolCallDelta") {
        const call = out.toolCalls[e.value.index];
        if (call) call.argumentsJson += e.value.argumentsJson;
      } else if (e.case === "stop") {
        out.stop = e.value.reason;
        out.outputTokens = e.value.usage?.outputTokens ?? 0;
      }
    }
    return out;
  }

  /** The tokens a session's KV holds now (it must be resident and idle). */
  async kvTokens(tenant: string, sessionId: string): Promise<number[]> {
    const session = await this.deps.sessions.lease(tenant, sessionId);
    try {
      return [...session.sequence.tokens];
    } finally {
      this.deps.sessions.release(session);
    }
  }

  /** Wait for background checkpoint writes to finish. */
  async settle(): Promise<void> {
    await this.deps.sessions.settled();
  }

  /** Free this harness's sequences (the engine is shared between tests) and close the store. */
  close(): void {
    this.deps.sessions.close();
    this.deps.shared?.dispose();
    this.store.close();
  }
}

export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const LOOKUP_TOOL = {
  name: "lookup",
  description: "Look a word up",
  inputSchemaJson: JSON.stringify({
    type: "object",
    properties: { word: { type: "string", maxLength: 6 } },
    required: ["word"],
  }),
};

export function userTurn(text: string, system = "You are a test agent.") {
  return {
    system: [system],
    tools: [LOOKUP_TOOL],
    toolChoice: { mode: ToolChoiceMode.ANY, disableParallelToolUse: true },
    messages: [{ role: Role.USER, content: [{ block: { case: "text" as const, value: { text } } }] }],
  };
}

/** The tool-results-only follow-up of a turn that made `calls`. */
export function toolResults(calls: { id: string }[], system = "You are a test agent.") {
  return {
    system: [system],
    tools: [LOOKUP_TOOL],
    toolChoice: { mode: ToolChoiceMode.AUTO },
    messages: [
      {
        role: Role.USER,
        content: calls.map((c) => ({
          block: { case: "toolResult" as const, value: { toolUseId: c.id, content: "result: ok", isError: false } },
        })),
      },
    ],
  };
}

export { newSessionId };
