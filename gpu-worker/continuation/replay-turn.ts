/**
 * Merging a replayed assistant message with Frontier's exact memory of the turn, when the message
 * also carries blocks Frontier did not make (a foreign search exchange, redacted or foreign
 * thinking). Such a run is tied to the next client-visible anchor (a tool_use ID, a text, a thinking
 * signature, redacted data), counted across the whole history:
 * - a run before the remembered blocks is rendered as context, then the remembered bytes, but only
 *   when its anchor occurs once in the history and every server_tool_use in it has its result;
 * - a remembered turn that continued a client's trailing message replays only on a message that
 *   starts with exactly those blocks (never on another message that merely shares its text);
 * - anything else (a run inside the turn, an anchor that repeats, an incomplete run) gets no
 *   remembered bytes: the message renders as the client sent it, every block in place.
 * Nothing is dropped and no run is given to a guessed owner; what is lost is only cache exactness.
 */
import type { ContentBlock, Conversation, Message } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { contextText } from "../chat/engine/content.ts";
import type { RawTurnAfterContext } from "../chat/types.ts";
import { blocksDigest, isForeignBlock, sameIdSet, toolUseIds, visibleText } from "./digest.ts";
import { type RememberedTurn, type TurnMemory, visibleTextKey } from "./turn-memory.ts";

/** How often each client-visible anchor occurs in a conversation. */
export type AnchorCounts = ReadonlyMap<string, number>;

export function anchorCounts(conversation: Conversation): AnchorCounts {
  const counts = new Map<string, number>();
  for (const message of conversation.messages)
    for (const block of message.content) {
      const anchor = anchorOf(block);
      if (anchor !== undefined) counts.set(anchor, (counts.get(anchor) ?? 0) + 1);
    }
  return counts;
}

/** A block's client-visible anchor (undefined for results and unsigned thinking). A run ties to the first
 * block after it that is not foreign, so a foreign server_tool_use is never its own run's anchor. */
export function anchorOf(block: ContentBlock): string | undefined {
  const b = block.block;
  switch (b.case) {
    case "text":
      return `text:${b.value.text}`;
    case "toolUse":
      return `tool_use:${b.value.id}`;
    case "serverToolUse":
      return `server_tool_use:${b.value.id}`;
    case "thinking":
      return b.value.signature === "" ? undefined : `signature:${b.value.signature}`;
    case "opaque":
      return b.value.anchor === "" ? undefined : `${b.value.type}:${b.value.anchor}`;
    default:
      return undefined;
  }
}

/** `history`: the `historyDigest` of the messages before `message` (asked only for a turn with no calls). */
export function replayTurn(
  memory: TurnMemory,
  tenant: string,
  message: Message,
  anchors: AnchorCounts,
  history: () => string,
): string | RawTurnAfterContext | undefined {
  const turn = recall(memory, tenant, message, history);
  if (!turn) return undefined;
  const blocks = message.content;
  const ownServerCalls = new Set(turn.serverToolUseIds ?? []);
  const isForeign = (block: ContentBlock) => isForeignBlock(block) && !ownServerCalls.has(serverCallId(block));
  const unique = (at: number) => {
    const block = blocks[at];
    const anchor = block && anchorOf(block);
    return anchor !== undefined && anchors.get(anchor) === 1;
  };
  if (turn.lead !== undefined) {
    const n = leadLength(blocks, turn.lead);
    if (n === undefined || blocks.slice(n).some(isForeign)) return undefined;
    return blocks.slice(0, n).some(isForeign) && !unique(n) ? undefined : turn.raw;
  }
  const run = blocks.findIndex((block) => !isForeign(block));
  if (run === -1 || blocks.slice(run).some(isForeign)) return undefined;
  if (run === 0) return turn.raw;
  const lead = blocks.slice(0, run);
  if (!complete(lead) || !unique(run)) return undefined;
  return { context: lead.map((block) => contextText(block) ?? "").join("\n"), raw: turn.raw };
}

function recall(
  memory: TurnMemory,
  tenant: string,
  message: Message,
  history: () => string,
): RememberedTurn | undefined {
  const ids = toolUseIds(message);
  if (ids.length > 0) {
    const turn = memory.recall(tenant, ids[0] ?? "");
    return turn && sameIdSet(turn.toolUseIds, ids) ? turn : undefined;
  }
  const turn = memory.recall(tenant, visibleTextKey(visibleText(message), history()));
  return turn && turn.toolUseIds.length === 0 ? turn : undefined;
}

/** How many leading blocks are the ones the turn continued (their digest matches), if any prefix is. */
function leadLength(blocks: readonly ContentBlock[], lead: string): number | undefined {
  for (let n = 1; n < blocks.length; n++) if (blocksDigest(blocks.slice(0, n)) === lead) return n;
  return undefined;
}

/** The hosted call a server tool block belongs to ("" for any other block). */
function serverCallId({ block }: ContentBlock): string {
  if (block.case === "serverToolUse") return block.value.id;
  if (block.case === "serverToolResult") return block.value.toolUseId;
  return "";
}

/** Every server_tool_use of the run has its result in the run. */
function complete(run: readonly ContentBlock[]): boolean {
  const results = new Set<string>();
  for (const { block } of run) if (block.case === "serverToolResult") results.add(block.value.toolUseId);
  return run.every(({ block }) => block.case !== "serverToolUse" || results.has(block.value.id));
}
