/** What SessionDO's methods take and answer (session-do.ts): opening, reassigning, recording a turn, reading it. */

export interface OpenArgs {
  sessionId: string;
  tenant: string;
  requestId: string;
  workerUrls: string[];
  /** existing: only an existing session of this tenant; claim: create it when absent; hint: claim unless the request is another branch. */
  mode: "existing" | "claim" | "hint";
  /** With mode hint: answer not_found for an absent session instead of creating it. */
  noCreate?: boolean;
  /** With mode hint: the request replays no assistant turn. */
  firstTurn?: boolean;
  /** Assistant turns the request replays (RoutingIds.assistantTurns): tells a follow-up of the running turn from a sibling. */
  assistantTurns?: number;
  /** Place a new session on this worker (a branch of a hinted session). */
  preferredWorker?: string;
  /**
   * Fingerprint of the request's system + tools. Recorded with the session; with mode hint, or
   * with `branchOnPrefix`, a request whose fingerprint differs from the session's is another
   * conversation (a title request, a memory subagent) and gets `branch` instead of the session.
   */
  prefix?: string;
  /** With mode existing: branch (rather than continue) when `prefix` differs from the session's. */
  branchOnPrefix?: boolean;
  /**
   * Workers known to be down or drained: a session on one of them moves (epoch + 1) to one of
   * `workerUrls`. Without it, a session moves when its worker is not in `workerUrls`.
   */
  unroutable?: string[];
}

export type OpenResult =
  | { status: "ok"; sessionId: string; workerUrl: string; epoch: number; created: boolean; turns: number }
  | { status: "not_found" }
  /** Another conversation uses this session's key (`prefix`: its system + tools differ; `busy`: a concurrent one). */
  | { status: "branch"; workerUrl: string; reason: "prefix" | "busy" };

export interface RecordTurnArgs {
  tenant: string;
  requestId: string;
  messageId: string;
  toolUseIds: string[];
  /** The epoch the turn ran under; a turn from an older epoch (a worker the session left) is ignored. */
  epoch?: number;
  /**
   * A session this turn's request created (its creation ran alongside the turn): when that creation
   * failed, the session is created here, on this worker at epoch 1, instead of losing the turn.
   */
  create?: { sessionId: string; workerUrl: string; prefix?: string | undefined };
}

export interface ReassignArgs {
  tenant: string;
  requestId: string;
  /** The epoch the caller saw fail; when the session already moved past it, the move is not repeated. */
  fromEpoch: number;
  workerUrl: string;
}

export interface SessionInfo {
  sessionId: string;
  workerUrl: string;
  epoch: number;
  createdAt: number;
  lastUsedAt: number;
  turns: number;
  lastMessageId: string | null;
  frontierToolUseIds: string[];
  busy: boolean;
}
