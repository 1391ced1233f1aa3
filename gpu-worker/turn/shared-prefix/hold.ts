/** After a turn: the index lists the session's sequence as a holder of its tokens' blocks. */
import { StopReason } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { Turn } from "../turn.ts";

export function holdTurnKv(turn: Turn): void {
  const { deps, session } = turn;
  // A cancelled turn leaves no frontier; a session without a data key is not indexed (keyed hashes only).
  if (!deps.shared || !session.dataKey || !session.frontier || turn.stopReason === StopReason.CANCELLED) return;
  deps.shared.holdLive(session.dataKey, session.sessionId, session.sequence.tokens);
}
