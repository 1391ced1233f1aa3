/**
 * What a follow-up that finds its session busy knows about the running turn, in the simulation's
 * virtual time, for the edge's `hintDecision` (edge/session/routing.ts): whether it follows that turn
 * (the trace names it as the parent) rather than being its sibling, how long that turn still holds
 * the session after a branch could start, and what a branch would spend re-prefilling.
 */
import type { RunningTurn } from "../../edge/session/routing.ts";
import { type CostModel, costMs } from "./cost-model.ts";
import type { SimRequest } from "./trace-sessions.ts";

/** The request that holds a session, and its end once it is being served. */
export interface SessionTurn {
  request: SimRequest;
  /** When its last token is out (virtual ms); undefined while it waits for a sequence. */
  endsAt: number | undefined;
}

/**
 * A branch goes to the same worker, so it queues behind the work already there: behind a running
 * turn's prefill (the engine is free at `engineFreeAt`), or behind a waiting turn's whole prefill.
 * What the running turn holds the session past that is its decode.
 */
export function runningTurnOf(
  r: SimRequest,
  turn: SessionTurn,
  engineFreeAt: number,
  now: number,
  cost: CostModel,
): RunningTurn {
  const parent = turn.request;
  const branchStart = Math.max(now, engineFreeAt);
  const remainingMs =
    turn.endsAt === undefined
      ? costMs(parent.outputLength, cost.decodeTokensPerSecond)
      : Math.max(0, turn.endsAt - branchStart);
  const held = Math.min(parent.inputLength + parent.outputLength, r.inputLength);
  return { follows: r.parent === parent.index, remainingMs, reprefillMs: costMs(held, cost.prefillTokensPerSecond) };
}
