/**
 * The SessionDO's soft lease: how long it lasts, whether it is held, the turn holding it as a hinted
 * request sees it, and the hinted opens waiting for it to be released.
 */
import type { RunningTurn } from "./routing.ts";
import type { OpenArgs } from "./session-args.ts";
import type { SessionRow } from "./session-row.ts";

/** A lease older than this is stale (its edge request died without releasing it). */
export const LEASE_MS = 10 * 60_000;
/**
 * How long a hinted open that finds the session busy waits for its lease to come back before it
 * branches. The edge records a turn (which releases the lease) after the client has the response,
 * so a client's immediate next request can arrive first; this wait lets it find the session's new
 * frontier. A request that really runs beside another turn of the same conversation (same hint
 * and prefix) branches this much later.
 */
export const HINT_LEASE_WAIT_MS = 250;
/**
 * How long a hinted open waits for a running turn it follows (it replays that turn's answer: one
 * assistant turn more than the lease holder) before it branches. The client has that answer, so only
 * the edge's record is pending; waiting this long is still cheaper than re-prefilling an agent's
 * context (tens of thousands of tokens) on a branch (routing.ts hintDecision).
 */
export const HINT_FOLLOW_WAIT_MS = 2_000;

/** A request holds the session's lease (a stale one, past `lease_until`, does not count). */
export function leaseHeld(row: SessionRow, now: number): boolean {
  return row.lease_until !== null && row.lease_until > now;
}

/**
 * The turn holding the lease, as a hinted request sees it. The client has the answer of a turn it
 * follows, so what remains is the record: the time already waited counts against the budget.
 */
export function runningTurn(
  holder: { requestId: string; assistantTurns: number } | undefined,
  row: SessionRow,
  args: OpenArgs,
  waitedMs: number,
): RunningTurn {
  if (holder === undefined || holder.requestId !== row.lease_request_id || args.assistantTurns === undefined) {
    return { follows: true, remainingMs: waitedMs, reprefillMs: HINT_LEASE_WAIT_MS };
  }
  const follows = args.assistantTurns === holder.assistantTurns + 1;
  return { follows, remainingMs: waitedMs, reprefillMs: HINT_FOLLOW_WAIT_MS };
}

/** Hinted opens waiting for a session's lease; each wakes when a lease is released or its wait is over. */
export class LeaseWaiters {
  readonly #waiters = new Set<() => void>();

  /** Resolves when a lease is released (recordTurn, release) or after `ms`, whichever is first. */
  released(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(done);
    });
  }

  wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
