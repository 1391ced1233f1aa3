/**
 * Issue 45: a conversation that starts from another conversation's KV (the shared-prefix rung:
 * llama.cpp's sequence copy out of a resident sequence) samples exactly as one prefilled cold, at
 * temperature 0, on every chat family, each on its own real-vocabulary model (as in
 * family-continuation.test.ts): same prompt tokens, same KV tokens after the turn, same output.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatFamily } from "../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../gpu-worker/chat/select-format.ts";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import type { FamilyName } from "../../native/model/families.ts";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { newSessionId, type TurnOutcome, tempDir, userTurn, WorkerHarness } from "../support/worker-harness.ts";

/** Each real-vocabulary model and the chat families it runs. */
const MODELS: ReadonlyArray<{ model: FamilyName; families: readonly ChatFamily[] }> = [
  { model: "qwen3", families: ["qwen3", "chatml"] },
  { model: "qwen3-coder", families: ["qwen3-coder"] },
  { model: "gpt-oss", families: ["harmony"] },
  { model: "glm", families: ["glm"] },
  { model: "deepseek-v3.1", families: ["deepseek-v3.1", "deepseek"] },
  { model: "kimi-k2", families: ["kimi-k2"] },
  { model: "minimax-m2", families: ["minimax-m2"] },
];

const SYSTEM = "You are the team's coding agent. Follow the project's conventions and keep changes small.";
const NOTES = "Project notes: the build uses make, tests live in test/, every function stays short. ".repeat(4);
const task = (what: string) => userTurn(`${NOTES}\nTask: ${what}`, SYSTEM);

/** What must be equal between the shared and the cold turn. */
function sampled(turn: TurnOutcome) {
  return {
    prompt: turn.promptTokens,
    text: turn.text,
    calls: turn.toolCalls.map((c) => [c.name, c.argumentsJson]),
    stop: turn.stop,
  };
}

describe.each(MODELS)("$model model (real vocabulary)", ({ model, families }) => {
  let engine: Engine;

  beforeAll(async () => {
    engine = await createEngine({
      modelPath: await ensureFamilyModel(model),
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

  it.each(families)("%s: a turn from a shared prefix samples exactly as a cold prefill", async (family) => {
    const format = createChatFormat(family, { chatTemplate: engine.model.chatTemplate });
    const run = async (sharedPrefix: false | { blockTokens: number; minTokens: number }) => {
      const dir = tempDir(`frontier-family-shared-${family}-`);
      const h = new WorkerHarness(engine, dir.path, { format, sharedPrefix });
      try {
        if (sharedPrefix) await h.turn("t", newSessionId(), task("fix the flaky test"), 8);
        const b = newSessionId();
        const turn = await h.turn("t", b, task("rename the helper"), 40);
        return { turn, kv: await h.kvTokens("t", b) };
      } finally {
        h.close();
        dir.remove();
      }
    };
    const cold = await run(false);
    expect(cold.turn.decision).toBe("cold");
    const shared = await run({ blockTokens: 16, minTokens: 16 });
    expect(shared.turn.decision).toBe("shared-prefix");
    expect(shared.turn.cachedTokens).toBeGreaterThan(32);
    expect(shared.turn.promptTokens - shared.turn.cachedTokens).toBeLessThan(24);
    expect(sampled(shared.turn)).toEqual(sampled(cold.turn));
    expect(shared.kv).toEqual(cold.kv);
  });
});
