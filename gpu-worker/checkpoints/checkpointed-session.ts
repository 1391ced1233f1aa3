/**
 * What the checkpoint lifecycle reads and marks on a live session. The session table's rows have
 * this shape, so `checkpoints/` needs nothing from `session/` (the table imports this room, never
 * the other way round).
 */
import type { EngineSequence } from "../../native/engine-types.ts";
import type { Frontier } from "../continuation/frontier.ts";
import type { TenantDataKey } from "./state/sealed-file.ts";

/**
 * Whose checkpoints an operation reads or writes, with the data key the edge sent for that tenant
 * on the request (undefined: none was sent, so nothing is written and nothing stored is opened).
 */
export interface KeyedOwner {
  readonly tenant: string;
  readonly dataKey: TenantDataKey | undefined;
}

export interface CheckpointedSession extends KeyedOwner {
  readonly sessionId: string;
  /** The engine sequence; undefined while it is being acquired or after parking. */
  readonly sequence: EngineSequence | undefined;
  /** A request holds the session. */
  readonly busy: boolean;
  /** Where the KV stops, recorded when a turn completes; undefined after a cancelled or failed turn. */
  readonly frontier: Frontier | undefined;
  /**
   * A checkpoint write is reading the sequence (the engine's dump of the KV: background write,
   * parking, hand-over); a new lease waits for that step only.
   */
  saving: Promise<void> | undefined;
}

/** A session resident with its sequence (leased, or idle and being written). */
export type ResidentSession = CheckpointedSession & { readonly sequence: EngineSequence };
