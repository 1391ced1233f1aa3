/**
 * The Generate stream's three deadlines (issue 42 item 3). A frozen or partitioned worker accepts the
 * connection (the kernel does) and then answers nothing; without deadlines its clients hang for as
 * long as their own timeouts allow. The worker answers every Generate with an immediate first event
 * and is never silent longer than its keep-alive interval (`FRONTIER_KEEPALIVE_MS`, 1 s: queued,
 * restoring, prefilling, sampling alike), so:
 * - `connect`: the fetch has the response's headers within `connectMs` (else the worker never took
 *   the request: the session may fail over, like an unreachable worker);
 * - `first_event`: the first bytes of the body within `firstEventMs` of the headers;
 * - `idle`: every later read within `idleMs` of asking (only while the edge is reading: a client that
 *   stops reading holds the edge's reads, not the worker).
 * The last two mean the worker stopped while it held the request: it is marked down and the request
 * is never run elsewhere (the same rule as a worker that died mid-request).
 */
import { Code, ConnectError } from "@connectrpc/connect";

export type DeadlineKind = "connect" | "first_event" | "idle";

/** Metadata naming the deadline a call missed. */
const DEADLINE_HEADER = "frontier-deadline";

const KINDS: readonly DeadlineKind[] = ["connect", "first_event", "idle"];

/** The error of a call the edge cut because the worker missed `kind`. */
export function deadlineMissed(kind: DeadlineKind, ms: number): ConnectError {
  const what = kind === "connect" ? "answer" : kind === "first_event" ? "send its first event" : "send an event";
  return new ConnectError(`the GPU worker did not ${what} within ${ms} ms`, Code.DeadlineExceeded, {
    [DEADLINE_HEADER]: kind,
  });
}

/** The deadline a call missed, if that is why it failed. */
export function missedDeadline(error: ConnectError): DeadlineKind | undefined {
  if (error.code !== Code.DeadlineExceeded) return undefined;
  const kind = error.metadata.get(DEADLINE_HEADER);
  return KINDS.find((k) => k === kind);
}

/** A deadline's clock looks at the time this many times over its length (see `within`). */
const TICKS = 10;

/**
 * `promise`, or `error()` once `ms` of the worker's time went by; then `cancel()` stops what it was
 * waiting for (after the rejection, so that whatever the cancel settles cannot win the race).
 * The clock counts only the time this isolate was free to see an answer: it ticks `TICKS` times over
 * `ms`, and a tick that comes late (the isolate was busy with other requests, or the host gave it no
 * CPU) counts as one tick, not as its lateness. Without that, an edge whose event loop lagged past a
 * deadline cut the calls whose answers were already waiting behind the timer, and marked healthy,
 * idle workers down (at 256 agents on a crowded 2-core host: thousands of `connect` cuts, 6 turns of
 * 772 served). A silent worker is still cut after `ms` of ticks: on time on an idle edge, later on a
 * lagging one (by at most the lag).
 */
export async function within<T>(promise: Promise<T>, ms: number, error: () => Error, cancel: () => void): Promise<T> {
  const tick = Math.max(1, ms / TICKS);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    let counted = 0;
    let last = Date.now();
    const look = () => {
      const now = Date.now();
      counted += Math.min(now - last, tick);
      last = now;
      if (counted < ms) {
        timer = setTimeout(look, Math.min(tick, ms - counted));
        return;
      }
      reject(error());
      cancel();
    };
    timer = setTimeout(look, tick);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
