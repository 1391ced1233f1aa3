/**
 * The Generate stream's liveness signal: a `KeepAlive` event whenever the turn has sent nothing for
 * `everyMs` — while it waits for a sequence, restores a checkpoint, plans, prefills or runs a hosted
 * tool. The edge cuts a stream that stays silent past its idle deadline (a frozen or partitioned
 * host: edge/worker/grpc-web-stream.ts), so a live worker must never be silent that long, whatever
 * the turn is doing. These come from a timer on the event loop, so they stop exactly when the
 * process stops (SIGSTOP, a partition) — which is what the edge's deadline detects.
 */
import type { GenerateEvent } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { generateEvent } from "../generate/events.ts";

const TIMEOUT = Symbol("keep-alive timeout");

/** `events`, with a keep-alive after every `everyMs` of silence (0: none added). */
export async function* withKeepAlive(
  events: AsyncGenerator<GenerateEvent>,
  everyMs: number,
): AsyncGenerator<GenerateEvent> {
  if (everyMs <= 0) {
    yield* events;
    return;
  }
  let pending: Promise<IteratorResult<GenerateEvent>> | undefined;
  try {
    for (;;) {
      pending ??= events.next();
      const next = await raceTimer(pending, everyMs);
      if (next === TIMEOUT) {
        yield generateEvent({ case: "keepAlive", value: { prefilledTokens: 0, totalTokens: 0 } });
        continue;
      }
      pending = undefined;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    // The reader left early: end the turn (queued behind a read still pending, if there is one).
    if (pending !== undefined) pending.catch(() => undefined);
    await events.return(undefined);
  }
}

async function raceTimer<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMEOUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMEOUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMEOUT), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
