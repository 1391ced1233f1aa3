/**
 * A turn that made no tool calls is remembered under its visible text and the history before it. Two
 * conversations of one tenant whose turns show the same text (often none: a turn of hidden reasoning
 * only) each replay their own sampled bytes; keyed by the visible text alone, the later one's bytes
 * were rendered into the other conversation's prompt.
 */
import { describe, expect, it } from "vitest";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import type { PromptSegment } from "../../../gpu-worker/chat/types.ts";
import { HistoryDigests } from "../../../gpu-worker/continuation/digest.ts";
import { planContinuation } from "../../../gpu-worker/continuation/plan-continuation.ts";
import { TurnMemory, visibleTextKey } from "../../../gpu-worker/continuation/turn-memory.ts";
import type { Conversation } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, text, user } from "../chat/fixtures.ts";

const TENANT = "tenant-a";
const tokenize = async (segments: readonly PromptSegment[]) =>
  segments.flatMap((s) => [...s.text].map((c) => c.length));

/** A conversation whose assistant turn (index 1) shows `shown` after the user's `question`. */
const replay = (question: string, shown: string): Conversation =>
  conversation([user(text(question)), assistant(text(shown)), user(text("Next?"))]);

async function rendered(conv: Conversation, memory: TurnMemory): Promise<string> {
  const plan = await planContinuation({
    tenant: TENANT,
    conversation: conv,
    format: new ChatMlFormat(),
    memory,
    frontier: undefined,
    liveTokens: [],
    tokenize,
  });
  return plan.rendered.text;
}

describe("turn memory of a turn with no calls", () => {
  it("replays each conversation's own bytes when two turns show the same text", async () => {
    const [a, b] = [replay("Question A", "OK."), replay("Question B", "OK.")];
    const memory = new TurnMemory();
    const rawA = "<think>\nreasoning of A\n</think>\n\nOK.";
    const rawB = "<think>\nreasoning of B\n</think>\n\nOK.";
    memory.remember(TENANT, [visibleTextKey("OK.", new HistoryDigests(a.messages).before(1))], {
      raw: rawA,
      toolUseIds: [],
    });
    memory.remember(TENANT, [visibleTextKey("OK.", new HistoryDigests(b.messages).before(1))], {
      raw: rawB,
      toolUseIds: [],
    });
    const [renderedA, renderedB] = [await rendered(a, memory), await rendered(b, memory)];
    expect(renderedA).toContain(rawA);
    expect(renderedA).not.toContain("reasoning of B");
    expect(renderedB).toContain(rawB);
    expect(renderedB).not.toContain("reasoning of A");
  });

  it("keys on the history the client replays, not on how Frontier's own earlier turns were spelled", () => {
    // An earlier assistant turn with no calls is identified by its visible text: thinking stripped by
    // the client leaves the history digest unchanged.
    const sampled = conversation([
      user(text("Q")),
      assistant({ block: { case: "thinking", value: { thinking: "hidden", signature: "s" } } }, text("A.")),
      user(text("Q2")),
    ]);
    const replayed = conversation([user(text("Q")), assistant(text("A.")), user(text("Q2"))]);
    expect(new HistoryDigests(replayed.messages).before(3)).toBe(new HistoryDigests(sampled.messages).before(3));
    expect(new HistoryDigests(replayed.messages).before(3)).not.toBe(new HistoryDigests(replayed.messages).before(1));
  });
});
