import type { EngineSequence } from "../../native/engine-types.ts";
import type { TenantDataKey } from "../checkpoints/state/sealed-file.ts";
import type { Frontier } from "../continuation/frontier.ts";

/** A conversation resident on this worker (parked ones live only in the checkpoint store). */
export interface LiveSession {
  readonly tenant: string;
  readonly sessionId: string;
  /**
   * The tenant's data key from the session's newest request, held only while the session is
   * resident (its background, parking and shutdown checkpoints are sealed under it); dropped when
   * the session is parked, superseded, released or closed.
   */
  dataKey: TenantDataKey | undefined;
  /** The engine sequence; undefined only while it is being acquired or after parking. */
  sequence: EngineSequence | undefined;
  busy: boolean;
  lastUsed: number;
  /** Where the KV stops, recorded when a turn completes; undefined after a cancelled or failed turn. */
  frontier: Frontier | undefined;
  /**
   * A checkpoint write is reading the sequence (the engine's dump of the KV: background write,
   * parking, hand-over); a new lease waits for that step only.
   */
  saving: Promise<void> | undefined;
}

/** A leased session: resident, with its sequence. */
export type LeasedSession = LiveSession & { sequence: EngineSequence };

/** Idle resident sessions by value: ended turns before those waiting on tool results, then LRU. */
export function leastValuableIdle(sessions: Iterable<LiveSession>): LiveSession | undefined {
  let victim: LiveSession | undefined;
  for (const s of sessions) {
    if (s.busy || s.saving || !s.sequence) continue;
    if (
      victim === undefined ||
      sessionValue(s) < sessionValue(victim) ||
      (sessionValue(s) === sessionValue(victim) && s.lastUsed < victim.lastUsed)
    ) {
      victim = s;
    }
  }
  return victim;
}

function sessionValue(session: LiveSession): number {
  if (!session.frontier) return 0;
  return session.frontier.toolUseIds.length > 0 ? 2 : 1;
}
