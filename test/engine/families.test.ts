/**
 * Every chat family through the real turn runner and engine (tiny byte-level model, in process):
 * a forced call in the family's own markup, streamed and parsed into a call with a minted ID, then
 * its tool result continued from the live KV, appending only the suffix. (Under each family's real
 * BPE vocabulary this is issue 12's item 6, which needs the real-vocabulary test models.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_FAMILIES } from "../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../gpu-worker/chat/select-format.ts";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { newSessionId, tempDir, toolResults, userTurn, WorkerHarness } from "../support/worker-harness.ts";

let engine: Engine;

beforeAll(async () => {
  engine = await createEngine({
    modelPath: await ensureTestModel("tiny"),
    contextSize: 4096,
    sequences: 1,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 256,
  });
});

afterAll(async () => {
  await engine?.dispose();
});

describe.each(CHAT_FAMILIES)("%s through the turn runner", (family) => {
  it("forces a call in its markup and continues its result suffix-only from the live KV", async () => {
    const dir = tempDir(`frontier-family-${family}-`);
    const format = createChatFormat(family, { chatTemplate: undefined });
    const h = new WorkerHarness(engine, dir.path, { format });
    try {
      const session = newSessionId();
      // DeepSeek's full-width markers are ~20 byte tokens each in the tiny model's vocabulary.
      const first = await h.turn("t", session, userTurn("alpha"), 400);
      expect(first.error).toBeUndefined();
      expect(first.stop).toBe(StopReason.TOOL_USE);
      expect(first.text).toBe("");
      expect(first.toolCalls.map((c) => c.name)).toEqual(["lookup"]);
      const args = JSON.parse(first.toolCalls[0]?.argumentsJson ?? "") as { word?: unknown };
      expect(typeof args.word).toBe("string");

      const second = await h.turn("t", session, toolResults(first.toolCalls), 8);
      expect(second.error).toBeUndefined();
      expect(second.decision).toBe("live-tool-ids");
      // Only the suffix (end of the call turn, the result, the next assistant prefix) is prefilled.
      const suffix = second.promptTokens - second.cachedTokens;
      expect(suffix).toBeGreaterThan(0);
      expect(suffix).toBeLessThan(120);
      expect(second.cachedTokens).toBeGreaterThan(first.promptTokens);
    } finally {
      h.close();
      dir.remove();
    }
  });
});
