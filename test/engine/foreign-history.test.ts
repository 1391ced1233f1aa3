/**
 * A history with another provider's search exchange (a conversation moved here from Anthropic's
 * API), continued by Frontier's real engine, survives a worker restart: the checkpoint keeps the
 * client's blocks byte for byte, so both a tool-results-only request (expanded from the restored
 * history) and a full replay continue the exact live state.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { type ContentBlockSchema, Role, ToolChoiceMode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { LOOKUP_TOOL, newSessionId, tempDir, toolResults, WorkerHarness } from "../support/worker-harness.ts";

let engine: Engine;

beforeAll(async () => {
  engine = await createEngine({
    modelPath: await ensureTestModel("tiny"),
    contextSize: 4096,
    sequences: 2,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 256,
  });
});

afterAll(async () => {
  await engine?.dispose();
});

type Block = MessageInitShape<typeof ContentBlockSchema>;
const SYSTEM = "You are a test agent.";
const foreignRun: Block[] = [
  {
    block: {
      case: "serverToolUse",
      value: { id: "srvtoolu_01X", name: "web_search", inputJson: '{"query":"frontier"}' },
    },
  },
  {
    block: {
      case: "serverToolResult",
      value: {
        toolUseId: "srvtoolu_01X",
        type: "web_search_tool_result",
        text: "[1] Frontier\nURL: https://a.example/x",
      },
    },
  },
  {
    block: {
      case: "opaque",
      value: {
        type: "redacted_thinking",
        json: '{"type":"redacted_thinking","data":"RD"}',
        text: "[redacted thinking]",
        anchor: "RD",
      },
    },
  },
];
const userText = (text: string) => ({
  role: Role.USER,
  content: [{ block: { case: "text" as const, value: { text } } }],
});
const foreignTurn = {
  role: Role.ASSISTANT,
  content: [...foreignRun, { block: { case: "text" as const, value: { text: "Frontier is at a.example." } } }],
};
const history = [userText("what is frontier?"), foreignTurn, userText("look it up")];

function nextTurn() {
  return {
    system: [SYSTEM],
    tools: [LOOKUP_TOOL],
    toolChoice: { mode: ToolChoiceMode.ANY, disableParallelToolUse: true },
    messages: history,
  };
}

describe("a foreign search exchange in the history", () => {
  it("survives a restart byte for byte and continues live from tool results alone or a full replay", async () => {
    const dir = tempDir("frontier-foreign-");
    try {
      const before = new WorkerHarness(engine, dir.path);
      const a = newSessionId();
      const b = newSessionId();
      const firstA = await before.turn("t", a, nextTurn());
      const firstB = await before.turn("t", b, nextTurn());
      expect(firstA.toolCalls.length).toBe(1);
      expect(firstB.toolCalls.length).toBe(1);
      await before.settle();
      before.close();

      const after = new WorkerHarness(engine, dir.path);
      // Only a checkpoint that kept the foreign blocks exactly lets the restored worker continue live.
      const onlyResults = await after.turn("t", a, toolResults(firstA.toolCalls, SYSTEM), 4);
      expect(onlyResults.error).toBeUndefined();
      expect(onlyResults.decision).toBe("live-tool-ids");
      // The whole restored history (foreign blocks included) is reused; only the results' suffix is new.
      expect(onlyResults.cachedTokens).toBeGreaterThan(firstA.promptTokens);
      expect(onlyResults.promptTokens - onlyResults.cachedTokens).toBeLessThan(100);

      const call = firstB.toolCalls[0];
      if (!call) throw new Error("a call");
      const replay = toolResults(firstB.toolCalls, SYSTEM);
      const full = await after.turn(
        "t",
        b,
        {
          ...replay,
          messages: [
            ...history,
            {
              role: Role.ASSISTANT,
              content: [
                { block: { case: "toolUse", value: { id: call.id, name: call.name, inputJson: call.argumentsJson } } },
              ],
            },
            ...replay.messages,
          ],
        },
        4,
      );
      expect(full.decision).toBe("live-tool-ids");
      expect(full.cachedTokens).toBeGreaterThan(firstB.promptTokens);
      expect(full.promptTokens - full.cachedTokens).toBeLessThan(100);
      after.close();
    } finally {
      dir.remove();
    }
  });
});
