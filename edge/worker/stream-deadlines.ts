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

/**
 * `promise`, or `error()` after `ms`; then `cancel()` stops what it was waiting for (after the
 * rejection, so that whatever the cancel settles cannot win the race).
 */
export async function within<T>(promise: Promise<T>, ms: number, error: () => Error, cancel: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(error());
      cancel();
    }, ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
