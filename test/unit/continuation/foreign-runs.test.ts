/**
 * Runs of blocks Frontier did not make inside assistant turns it also remembers exactly: tied to the
 * next client-visible anchor, counted by occurrence across the whole history (replay-turn.ts).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import type { PromptSegment } from "../../../gpu-worker/chat/types.ts";
import { continuedBlocksDigest, HistoryDigests } from "../../../gpu-worker/continuation/digest.ts";
import { type Frontier, frontierFromJson, frontierToJson } from "../../../gpu-worker/continuation/frontier.ts";
import { planContinuation } from "../../../gpu-worker/continuation/plan-continuation.ts";
import { anchorCounts } from "../../../gpu-worker/continuation/replay-turn.ts";
import { TurnMemory, visibleTextKey } from "../../../gpu-worker/continuation/turn-memory.ts";
import { type Conversation, MessageSchema } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, text, toolResult, toolUse, user } from "../chat/fixtures.ts";

const format = new ChatMlFormat();
const TENANT = "tenant-a";
const tokenize = async (segments: readonly PromptSegment[]) =>
  segments.flatMap((s) => [...s.text].map((c) => c.length));

const HIT_TEXT = "[1] Frontier docs\nURL: https://docs.example/frontier\nAge: 2 days";
const searchUse = (id: string) => ({
  block: { case: "serverToolUse" as const, value: { id, name: "web_search", inputJson: '{"query":"frontier"}' } },
});
const searchResult = (id: string) => ({
  block: {
    case: "serverToolResult" as const,
    value: { toolUseId: id, type: "web_search_tool_result", text: HIT_TEXT, isError: false },
  },
});
const RAW_CALL = '</think>\n\n<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>';
// The client re-serialises the call's input; only the remembered bytes spell RAW_CALL.
const clientCall = toolUse("toolu_9", "Bash", '{ "command" : "ls" }');

async function render(conv: Conversation, memory: TurnMemory): Promise<string> {
  const plan = await planContinuation({
    tenant: TENANT,
    conversation: conv,
    format,
    memory,
    frontier: undefined,
    liveTokens: [],
    tokenize,
  });
  return plan.rendered.text;
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

function rememberCall(): TurnMemory {
  const memory = new TurnMemory();
  memory.remember(TENANT, ["toolu_9"], { raw: RAW_CALL, toolUseIds: ["toolu_9"] });
  return memory;
}

/** Frontier continued the client's trailing [search exchange] message and sampled `sampled`. */
async function rememberContinued(sampled: string): Promise<TurnMemory> {
  const first = conversation([user(text("Search it")), assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a"))]);
  const plan = await planContinuation({
    tenant: TENANT,
    conversation: first,
    format,
    memory: new TurnMemory(),
    frontier: undefined,
    liveTokens: [],
    tokenize,
  });
  const memory = new TurnMemory();
  memory.remember(TENANT, [visibleTextKey(sampled, new HistoryDigests(first.messages).before(1))], {
    raw: plan.rendered.generationPrefill + sampled,
    toolUseIds: [],
    lead: continuedBlocksDigest(first.messages),
  });
  return memory;
}

describe("foreign runs in remembered assistant turns", async () => {
  it("renders a complete leading search run as context, then the exact remembered bytes (it used to be dropped)", async () => {
    const conv = conversation([
      user(text("Find the docs, then list files")),
      assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a"), clientCall),
      user(toolResult("toolu_9", "a.txt")),
    ]);
    const rendered = await render(conv, rememberCall());
    expect(occurrences(rendered, RAW_CALL)).toBe(1);
    expect(occurrences(rendered, HIT_TEXT)).toBe(1);
    expect(rendered.indexOf(HIT_TEXT)).toBeLessThan(rendered.indexOf(RAW_CALL));
    expect(rendered.indexOf("Find the docs")).toBeLessThan(rendered.indexOf(HIT_TEXT));
  });

  it("does not re-place a run whose server_tool_use has no result: the message renders as sent", async () => {
    const conv = conversation([
      user(text("Find the docs, then list files")),
      assistant(searchUse("srvtoolu_a"), clientCall),
      user(toolResult("toolu_9", "a.txt")),
    ]);
    const rendered = await render(conv, rememberCall());
    expect(rendered).not.toContain(RAW_CALL);
    expect(rendered).toContain('"command" : "ls"');
    expect(rendered).toContain('{"query":"frontier"}');
  });

  it("does not re-place a run inside the remembered turn (between its own blocks)", async () => {
    const conv = conversation([
      user(text("go")),
      assistant(text("Let me look."), searchUse("srvtoolu_a"), searchResult("srvtoolu_a"), clientCall),
      user(toolResult("toolu_9", "a.txt")),
    ]);
    const memory = rememberCall();
    const rendered = await render(conv, memory);
    expect(rendered).not.toContain(RAW_CALL);
    expect(rendered.indexOf("Let me look.")).toBeLessThan(rendered.indexOf(HIT_TEXT));
    expect(rendered.indexOf(HIT_TEXT)).toBeLessThan(rendered.indexOf('"command" : "ls"'));
  });

  it("counts anchors by occurrence across the whole history", async () => {
    const conv = conversation([
      user(text("q1")),
      assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a"), text("Done.")),
      user(text("q2")),
      assistant(text("Done.")),
      user(toolResult("toolu_9", "x")),
    ]);
    const counts = anchorCounts(conv);
    expect(counts.get("text:Done.")).toBe(2);
    expect(counts.get("text:q1")).toBe(1);
    expect(counts.get("server_tool_use:srvtoolu_a")).toBe(1);
  });

  it("a repeated identical text does not take a later run: the continued turn's run stays where the client put it", async () => {
    const memory = await rememberContinued("Done.");
    const conv = conversation([
      user(text("Search it")),
      assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a"), text("Done.")),
      user(text("And again?")),
      assistant(text("Done.")),
      user(text("Thanks")),
    ]);
    const rendered = await render(conv, memory);
    // Exactly one copy of the run, in the first turn; the later "Done." renders alone.
    expect(occurrences(rendered, HIT_TEXT)).toBe(1);
    const later = rendered.indexOf("And again?");
    expect(rendered.indexOf(HIT_TEXT)).toBeLessThan(later);
    expect(rendered.slice(later)).not.toContain("web_search");
    expect(occurrences(rendered, "Done.")).toBe(2);
  });

  it("a continued turn whose anchor is unique replays byte for byte what the KV holds", async () => {
    const memory = await rememberContinued("Found it.");
    const first = conversation([
      user(text("Search it")),
      assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a")),
    ]);
    const firstPrompt = (
      await planContinuation({
        tenant: TENANT,
        conversation: first,
        format,
        memory: new TurnMemory(),
        frontier: undefined,
        liveTokens: [],
        tokenize,
      })
    ).rendered.text;
    const kvText = `${firstPrompt}Found it.`;
    const replay = conversation([
      user(text("Search it")),
      assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a"), text("Found it.")),
      user(text("Thanks")),
    ]);
    expect((await render(replay, memory)).startsWith(kvText)).toBe(true);
    // The same text on a message without the run gets no remembered bytes (no run is guessed onto it).
    const other = conversation([user(text("Search it")), assistant(text("Found it.")), user(text("Thanks"))]);
    expect(occurrences(await render(other, memory), HIT_TEXT)).toBe(0);
  });

  it("keeps the client's blocks of a foreign run byte for byte in the conversation it plans", async () => {
    const conv = conversation([
      user(text("go")),
      assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a"), clientCall),
      user(toolResult("toolu_9", "a.txt")),
    ]);
    const before = conv.messages.map((m) => create(MessageSchema, m));
    const plan = await planContinuation({
      tenant: TENANT,
      conversation: conv,
      format,
      memory: rememberCall(),
      frontier: undefined,
      liveTokens: [],
      tokenize,
    });
    expect(plan.conversation.messages).toEqual(before);
  });

  it("a checkpoint's frontier keeps the client's foreign blocks byte for byte, and the continued turn's lead", async () => {
    const messages = conversation([
      user(text("Search it")),
      assistant(searchUse("srvtoolu_a"), searchResult("srvtoolu_a"), {
        block: {
          case: "opaque",
          value: {
            type: "redacted_thinking",
            json: '{"type":"redacted_thinking","data":"RD"}',
            text: "[redacted thinking]",
            anchor: "RD",
          },
        },
      }),
    ]).messages;
    const lead = continuedBlocksDigest(messages);
    expect(lead).toBeDefined();
    const frontier: Frontier = {
      text: "t",
      tokenCount: 1,
      toolUseIds: ["toolu_9"],
      messages,
      messageDigests: [],
      headerDigest: "h",
      lastTurn: { keys: ["toolu_9"], raw: "r", toolUseIds: ["toolu_9"], lead, spans: [] },
    };
    const restored = frontierFromJson(JSON.parse(JSON.stringify(frontierToJson(frontier))));
    expect(restored.messages.map((m) => toBinary(MessageSchema, m))).toEqual(
      messages.map((m) => toBinary(MessageSchema, m)),
    );
    expect(restored.lastTurn.lead).toBe(lead);
    expect(continuedBlocksDigest(restored.messages)).toBe(lead);
  });

  it("treats hosted calls Frontier ran inside its own turn as part of the remembered bytes, not a foreign run", async () => {
    const raw = "<tool_call>web_search</tool_call>[1] Frontier docs\nDone.";
    const memory = new TurnMemory();
    const searchIt = user(text("Search it"));
    const key = visibleTextKey("Done.", new HistoryDigests(conversation([searchIt]).messages).before(1));
    memory.remember(TENANT, [key], { raw, toolUseIds: [], serverToolUseIds: ["srvtoolu_own"] });
    const conv = conversation([
      searchIt,
      assistant(searchUse("srvtoolu_own"), searchResult("srvtoolu_own"), text("Done.")),
      user(text("Thanks")),
    ]);
    const rendered = await render(conv, memory);
    expect(occurrences(rendered, raw)).toBe(1);
    expect(occurrences(rendered, HIT_TEXT)).toBe(0);
  });
});
