/**
 * Issue 12 item 6: continuation under each family's REAL BPE vocabulary, through the real turn
 * runner and engine (tiny-width real-vocabulary models from `ensureFamilyModel`, in process).
 * Per chat family, on its own model (chatml on the Qwen vocabulary, DeepSeek DSML on the V3 one):
 * (a) a live tool-ID match prefills only the suffix and keeps the whole KV;
 * (b) a full replay whose call JSON the client re-serialised (keys reordered, re-spaced) is still a
 *     live match, identical to the results-only request;
 * (c) the same replay on a session with no live state is a cold prefill of exactly the token
 *     sequence the live KV held (span token memory), and its greedy output equals the live turn's;
 * (d) after an `end_turn`, the history plus a new user message continues by rendered-text prefix,
 *     suffix only (templates that rewrite history only drop reasoning, off here; Frontier renders
 *     its exact transcript either way).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detectFamily } from "../../gpu-worker/chat/detect-family.ts";
import type { ChatFamily } from "../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../gpu-worker/chat/select-format.ts";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import type { FamilyName } from "../../native/model/families.ts";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { Role, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import {
  LOOKUP_TOOL,
  newSessionId,
  type TurnOutcome,
  tempDir,
  toolResults,
  userTurn,
  WorkerHarness,
} from "../support/worker-harness.ts";

/** Each real-vocabulary model and the chat families it runs (its own first: auto-detected from its template). */
const MODELS: ReadonlyArray<{ model: FamilyName; families: readonly ChatFamily[] }> = [
  { model: "qwen3", families: ["qwen3", "chatml"] },
  { model: "qwen3-coder", families: ["qwen3-coder"] },
  { model: "gpt-oss", families: ["harmony"] },
  { model: "glm", families: ["glm"] },
  { model: "deepseek-v3.1", families: ["deepseek-v3.1", "deepseek"] },
  { model: "kimi-k2", families: ["kimi-k2"] },
  { model: "minimax-m2", families: ["minimax-m2"] },
];

/** The suffix of a tool-result turn (end of the call turn, one short result, the next assistant prefix) is tens of tokens. */
const MAX_SUFFIX = 40;

/** The client's replay of a forced `lookup` call: same values, keys re-spaced as a client's JSON.stringify(…, 2) would. */
function reserialised(argumentsJson: string): string {
  const args = JSON.parse(argumentsJson) as Record<string, unknown>;
  const reordered = Object.fromEntries(Object.entries(args).reverse());
  return JSON.stringify(reordered, null, 2);
}

/** The full history a client replays after a forced call: the user turn, the call (re-serialised), its result. */
function replay(user: string, call: TurnOutcome["toolCalls"][number]) {
  const results = toolResults([call]);
  return {
    ...results,
    messages: [
      ...userTurn(user).messages,
      {
        role: Role.ASSISTANT,
        content: [
          {
            block: {
              case: "toolUse" as const,
              value: { id: call.id, name: call.name, inputJson: reserialised(call.argumentsJson) },
            },
          },
        ],
      },
      ...results.messages,
    ],
  };
}

function assistantText(text: string) {
  return { role: Role.ASSISTANT, content: [{ block: { case: "text" as const, value: { text } } }] };
}

function userText(text: string) {
  return { role: Role.USER, content: [{ block: { case: "text" as const, value: { text } } }] };
}

describe.each(MODELS)("$model model (real vocabulary)", ({ model, families }) => {
  let engine: Engine;

  beforeAll(async () => {
    engine = await createEngine({
      modelPath: await ensureFamilyModel(model),
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

  it("recognises its own family from the model's chat template", () => {
    expect(
      detectFamily({ chatTemplate: engine.model.chatTemplate, architecture: engine.model.architecture }).family,
    ).toBe(families[0]);
  });

  it.each(families)(
    "%s: live IDs, a re-serialised replay, a cold replay and a new user turn stay token-exact",
    async (family) => {
      const dir = tempDir(`frontier-family-bpe-${family}-`);
      const format = createChatFormat(family, { chatTemplate: engine.model.chatTemplate });
      const h = new WorkerHarness(engine, dir.path, { format, testPolicy: "scripted-tools" });
      try {
        // One sequence: the sessions take turns in it (A's turns first, so each of them runs live).
        const [a, b, c] = [newSessionId(), newSessionId(), newSessionId()];
        const first = await h.turn("t", a, userTurn("alpha"), 120);
        expect(first.stop).toBe(StopReason.TOOL_USE);
        const call = first.toolCalls[0];
        expect(first.toolCalls.map((x) => x.name)).toEqual([LOOKUP_TOOL.name]);
        if (!call) throw new Error("no call");
        const firstKv = await h.kvTokens("t", a);
        expect(firstKv.length).toBeGreaterThanOrEqual(first.promptTokens + first.outputTokens - 1);

        // (a) results only, by ID: the whole KV kept, only the suffix prefilled.
        const live = await h.turn("t", a, toolResults([call]), 80);
        expect(live.decision).toBe("live-tool-ids");
        expect(live.cachedTokens).toBe(firstKv.length);
        expect(live.promptTokens - live.cachedTokens).toBeGreaterThan(0);
        expect(live.promptTokens - live.cachedTokens).toBeLessThan(MAX_SUFFIX);
        expect(live.stop).toBe(StopReason.END_TURN);
        const liveKv = await h.kvTokens("t", a);
        expect(liveKv.slice(0, firstKv.length)).toEqual(firstKv);

        // (d) after end_turn, the client's history plus a new user message: rendered-text prefix, suffix only.
        const history = replay("alpha", call);
        const next = await h.turn(
          "t",
          a,
          { ...history, messages: [...history.messages, assistantText(live.text), userText("beta")] },
          4,
        );
        expect(next.decision).toBe("live-text-prefix");
        expect(next.cachedTokens).toBe(liveKv.length);
        expect(next.promptTokens - next.cachedTokens).toBeGreaterThan(0);
        expect(next.promptTokens - next.cachedTokens).toBeLessThan(MAX_SUFFIX);

        // (b) the same first turn on session B, then the client replaying the call with its own JSON.
        const firstB = await h.turn("t", b, userTurn("alpha"), 120);
        const callB = firstB.toolCalls[0];
        if (!callB) throw new Error("no call on B");
        expect(callB.argumentsJson).toBe(call.argumentsJson);
        expect(reserialised(callB.argumentsJson)).not.toBe(callB.argumentsJson);
        const replayed = await h.turn("t", b, replay("alpha", callB), 80);
        expect(replayed.decision).toBe("live-tool-ids");
        expect([replayed.cachedTokens, replayed.promptTokens]).toEqual([live.cachedTokens, live.promptTokens]);
        expect(replayed.text).toBe(live.text);

        // (c) A's replay on session C (no live state: a moved or restarted session): a cold prefill, a
        // restore of the tenant's tool-frontier checkpoint of the same prefix (written in the
        // background since the harness sends a data key), or the prefix another of its conversations
        // holds (shared-prefix), every way exactly the tokens A's KV held (the sampled call re-enters
        // as the tokens the model chose), and the same greedy output.
        const cold = await h.turn("t", c, replay("alpha", call), 80);
        expect(["cold", "checkpoint", "shared-prefix"]).toContain(cold.decision);
        expect(cold.promptTokens).toBe(live.promptTokens);
        expect(await h.kvTokens("t", c)).toEqual(liveKv);
        expect(cold.text).toBe(live.text);
      } finally {
        h.close();
        dir.remove();
      }
    },
  );
});
