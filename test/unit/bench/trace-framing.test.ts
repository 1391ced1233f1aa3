/**
 * The trace replay's chat framing (bench/trace/chat-framing.ts) against what the worker prefills: the
 * edge's Responses conversion, the worker's continuation ladder (planContinuation) with its ChatML
 * rendering and the real tokenizer thread on the generated tiny model. llama-server's framed prompts
 * must be exactly the tokens the worker holds after each turn.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlockTokens, oneToOneAlphabet, tokensToText } from "../../../bench/trace/block-tokens.ts";
import {
  type ChatFraming,
  chatFraming,
  framedFirstTurn,
  framedNextTurn,
  outputInContext,
} from "../../../bench/trace/chat-framing.ts";
import { toConversation } from "../../../edge/protocols/responses/request/normalize.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { selectChatFormat } from "../../../gpu-worker/chat/select-format.ts";
import type { ChatFormat, PromptSegment } from "../../../gpu-worker/chat/types.ts";
import {
  headerDigest,
  historyDigest,
  messageDigest,
  messagesBeforeTurn,
} from "../../../gpu-worker/continuation/digest.ts";
import { type Frontier, specialSpans } from "../../../gpu-worker/continuation/frontier.ts";
import { planContinuation } from "../../../gpu-worker/continuation/plan-continuation.ts";
import { TurnMemory, visibleTextKey } from "../../../gpu-worker/continuation/turn-memory.ts";
import { inspectModel } from "../../../native/engine.ts";
import { validateGguf } from "../../../native/model/gguf-validate.ts";
import { ensureTestModel, TEST_MODEL_SPECS } from "../../../native/model/gguf-writer.ts";
import { TokenizerWorker } from "../../../native/tokenizer/tokenizer-worker.ts";
import type { Conversation } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const TENANT = "t";
const blocks = new BlockTokens(oneToOneAlphabet(TEST_MODEL_SPECS.tiny.vocab), 32);
let tokenizer: TokenizerWorker;
let format: ChatFormat;
let framing: ChatFraming;

const tokenize = async (segments: readonly PromptSegment[]): Promise<number[]> => {
  const out: number[] = [];
  for (const s of segments) if (s.text.length > 0) out.push(...(await tokenizer.tokenize(s.text, s.special)));
  return out;
};

/** The conversation the edge builds from the Responses input items (history first, then the new input). */
function edgeConversation(items: unknown[]): Conversation {
  const request = validateResponsesRequest({ model: "frontier-test", input: items, max_output_tokens: 8 });
  return toConversation(request, request.input);
}

const userItem = (tokens: readonly number[]) => ({ role: "user", content: tokensToText(tokens) });
const assistantItem = (tokens: readonly number[]) => ({
  type: "message",
  role: "assistant",
  id: "msg_1",
  content: [{ type: "output_text", text: tokensToText(tokens) }],
});

beforeAll(async () => {
  const modelPath = await ensureTestModel("tiny");
  format = selectChatFormat("auto", await inspectModel(modelPath)).format;
  const { tokens, tokenTypes, tokenizerPre } = await validateGguf(modelPath);
  tokenizer = new TokenizerWorker(modelPath, { tokens, tokenTypes, tokenizerPre });
  framing = await chatFraming(format, (text, special) => tokenizer.tokenize(text, special), blocks.block(1));
});

afterAll(async () => {
  await tokenizer?.dispose();
});

describe("trace replay chat framing", () => {
  it("a first turn is what the worker prefills cold for the same Responses request", async () => {
    const content = blocks.prompt([3, 4, 5], 80);
    const plan = await planContinuation({
      tenant: TENANT,
      conversation: edgeConversation([userItem(content)]),
      format,
      memory: new TurnMemory(),
      frontier: undefined,
      liveTokens: [],
      tokenize,
    });
    expect(plan.decision).toBe("cold");
    expect(framedFirstTurn(framing, content)).toEqual(plan.append);
    expect(framing.format).toBe("chatml");
    expect(framing.open.length).toBeGreaterThan(0);
    expect(framing.close.length).toBeGreaterThan(0);
  });

  it("a next turn continues the worker's live KV (prompt + sampled output) exactly as the worker's ladder does", async () => {
    const first = blocks.prompt([6, 7], 50);
    const firstConversation = edgeConversation([userItem(first)]);
    const memory = new TurnMemory();
    const cold = await planContinuation({
      tenant: TENANT,
      conversation: firstConversation,
      format,
      memory,
      frontier: undefined,
      liveTokens: [],
      tokenize,
    });
    // The turn samples `output` (alphabet tokens: their text tokenizes back to them); the worker
    // remembers the turn and records its frontier, as gpu-worker/turn does after a turn.
    const output = blocks.block(8).slice(0, 12);
    const sampled = tokensToText(output);
    const live = [...cold.append, ...output];
    const history = historyDigest(
      firstConversation.messages.slice(0, messagesBeforeTurn(firstConversation.messages)).map(messageDigest),
    );
    const raw = cold.rendered.generationPrefill + sampled;
    memory.remember(TENANT, [visibleTextKey(sampled, history)], { raw, toolUseIds: [] });
    const frontier: Frontier = {
      text: cold.rendered.text + sampled,
      tokenCount: live.length,
      toolUseIds: [],
      messages: cold.conversation.messages,
      messageDigests: cold.conversation.messages.map(messageDigest),
      headerDigest: headerDigest(cold.conversation),
      controlSpans: { spans: specialSpans(cold.rendered.segments), promptLength: cold.rendered.text.length },
      lastTurn: { keys: [], raw, toolUseIds: [], spans: [] },
    };
    const added = blocks.prompt([9, 10], 40);
    const next = await planContinuation({
      tenant: TENANT,
      conversation: edgeConversation([userItem(first), assistantItem(output), userItem(added)]),
      format,
      memory,
      frontier,
      liveTokens: live,
      tokenize,
    });
    expect(next.decision).toBe("live-text-prefix");
    expect(next.keep).toBe(live.length);
    expect(framedNextTurn(framing, live, added)).toEqual([...live, ...next.append]);
  });

  it("a sampled end-of-generation token is not part of the next context (the framing closes the turn)", () => {
    const endOfTurn = framing.endOfGeneration[0] as number;
    expect(outputInContext(framing, [65, 66, endOfTurn])).toEqual([65, 66]);
    expect(outputInContext(framing, [65, 66])).toEqual([65, 66]);
    expect(framing.between[0]).toBe(endOfTurn);
  });
});
