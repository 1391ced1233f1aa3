/**
 * A session checkpoint carries the remembered exact bytes of the session's earlier assistant turns,
 * so another worker restoring it renders a full replay exactly as the KV holds it.
 */
import { Role } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { historyDigest, toolUseIds, visibleText } from "../continuation/digest.ts";
import type { Frontier } from "../continuation/frontier.ts";
import { type RememberedTurn, type TurnMemory, visibleTextKey } from "../continuation/turn-memory.ts";

export interface EarlierTurn extends RememberedTurn {
  keys: string[];
}

/** The remembered exact bytes of the assistant turns before the frontier's last one. */
export function earlierTurns(memory: TurnMemory | undefined, tenant: string, frontier: Frontier): EarlierTurn[] {
  if (!memory) return [];
  const out: EarlierTurn[] = [];
  frontier.messages.forEach((message, index) => {
    if (message.role !== Role.ASSISTANT) return;
    const ids = toolUseIds(message);
    const history = historyDigest(frontier.messageDigests.slice(0, index));
    const keys = ids.length > 0 ? ids : [visibleTextKey(visibleText(message), history)];
    const turn = memory.recall(tenant, keys[0] ?? "");
    if (turn)
      out.push({
        keys,
        raw: turn.raw,
        toolUseIds: [...turn.toolUseIds],
        lead: turn.lead,
        serverToolUseIds: turn.serverToolUseIds,
      });
  });
  return out;
}

/** The earlier turns a checkpoint's extra JSON carries (malformed entries skipped). */
export function earlierTurnsOf(extra: unknown): EarlierTurn[] {
  const turns = (extra as { earlierTurns?: unknown } | null)?.earlierTurns;
  if (!Array.isArray(turns)) return [];
  return turns.filter(
    (t): t is EarlierTurn =>
      typeof t === "object" &&
      t !== null &&
      Array.isArray((t as EarlierTurn).keys) &&
      typeof (t as EarlierTurn).raw === "string" &&
      Array.isArray((t as EarlierTurn).toolUseIds),
  );
}
