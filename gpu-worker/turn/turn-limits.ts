/**
 * A turn's two clocks (issue 30, M1):
 * - the wall clock: a turn that runs past `wallClockMs` is cut (its signal aborts with a TurnCut:
 *   the sampler stops at the next token and the turn is recorded as one stopped early, the session
 *   released) and the caller gets an error event instead of the stop event, so the client sees the
 *   protocol's error, not a silent truncation;
 * - the stall clock: the turn runs ahead of its reader by up to `aheadEvents` events. When the reader
 *   has taken nothing for `stallMs` while that buffer is full (a client that stopped reading), the
 *   turn is cut the same way: its sequence is released, its state stays recorded (and is parked to
 *   a checkpoint when another turn needs the sequence), and the events it still produces are dropped.
 * Without these a slow or stuck client held a sequence, and with it other tenants' turns, for as
 * long as its connection stayed open.
 */
import { type GenerateEvent, WorkerErrorCode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { WorkerConfig } from "../config.ts";
import { generateEvent } from "../generate/events.ts";
import { TurnCut } from "../generate/turn-cut.ts";
import { log } from "../log.ts";

export interface TurnLimits {
  /** Longest a turn may run, in ms (0: no limit). */
  wallClockMs: number;
  /** Longest the reader may leave a full buffer unread, in ms (0: no limit). */
  stallMs: number;
  /** Events the turn may produce ahead of its reader. */
  aheadEvents: number;
}

export type LimitHit = "wall-clock" | "stall";

/** Events a turn may run ahead of its reader before the stall clock starts. */
const AHEAD_EVENTS = 256;

export function turnLimitsOf(config: Pick<WorkerConfig, "turnWallClockMs" | "stallMs">): TurnLimits {
  return { wallClockMs: config.turnWallClockMs, stallMs: config.stallMs, aheadEvents: AHEAD_EVENTS };
}

/** The error event a turn past its wall clock ends with (the edge turns it into the protocol's error). */
export function turnTimeLimitEvent(limitMs: number, requestId: string): GenerateEvent {
  const seconds = Math.round(limitMs / 1000);
  return generateEvent({
    case: "error",
    value: {
      code: WorkerErrorCode.TURN_TIME_LIMIT,
      message: `the turn ran past the server's ${seconds} s time limit and was stopped (request ${requestId}); ask for less output (max_tokens) or split the work`,
      param: "",
    },
  });
}

/**
 * Run `start(signal)` under `limits`. `signal` (the caller's: client gone) and the limits both
 * cancel the turn through the signal handed to `start`. `limitError` makes the event that replaces
 * the stop event when the wall clock ends the turn.
 */
export async function* limitTurn(
  start: (signal: AbortSignal) => AsyncGenerator<GenerateEvent>,
  signal: AbortSignal,
  limits: TurnLimits,
  limitError: (hit: LimitHit) => GenerateEvent,
  requestId: string,
): AsyncGenerator<GenerateEvent> {
  const cancel = new AbortController();
  let wakeReader: (() => void) | undefined;
  let wakePump: (() => void) | undefined;
  const onAbort = () => {
    cancel.abort(signal.reason);
    wakePump?.();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  let hit: LimitHit | undefined;
  const stop = (why: LimitHit) => {
    if (hit !== undefined || cancel.signal.aborted) return;
    hit = why;
    log(why === "wall-clock" ? "turn reached its wall-clock limit" : "turn cancelled: its reader stalled", {
      request: requestId,
      limitMs: why === "wall-clock" ? limits.wallClockMs : limits.stallMs,
    });
    cancel.abort(new TurnCut(why));
    wakePump?.();
  };
  const wall = limits.wallClockMs > 0 ? setTimeout(() => stop("wall-clock"), limits.wallClockMs) : undefined;
  const buffer: GenerateEvent[] = [];
  let done = false;
  let failure: { error: unknown } | undefined;
  let stall: ReturnType<typeof setTimeout> | undefined;
  const pump = (async () => {
    try {
      for await (const event of start(cancel.signal)) {
        if (hit === "stall") continue; // nobody reads any more: let the turn finish and record
        buffer.push(event);
        wakeReader?.();
        while (buffer.length >= limits.aheadEvents && hit === undefined && !signal.aborted) {
          if (limits.stallMs > 0 && stall === undefined) stall = setTimeout(() => stop("stall"), limits.stallMs);
          await new Promise<void>((resolve) => {
            wakePump = resolve;
          });
        }
      }
    } catch (error) {
      failure = { error };
    } finally {
      done = true;
      wakeReader?.();
    }
  })();
  try {
    for (;;) {
      const event = buffer.shift();
      if (event !== undefined) {
        clearTimeout(stall);
        stall = undefined;
        wakePump?.();
        if (hit === "wall-clock" && event.event.case === "stop") {
          yield limitError("wall-clock");
          continue;
        }
        yield event;
        continue;
      }
      if (done) break;
      await new Promise<void>((resolve) => {
        wakeReader = resolve;
      });
      wakeReader = undefined;
    }
    // A turn cut before it could sample (during prefill, say) fails with the cut as its reason.
    if (failure !== undefined) {
      if (hit === "wall-clock") yield limitError("wall-clock");
      else if (hit !== "stall") throw failure.error;
    }
  } finally {
    // The reader left (or the turn ended): cancel what still runs and let it settle before returning,
    // so the session is released before the RPC completes.
    clearTimeout(wall);
    clearTimeout(stall);
    if (!done) cancel.abort(new Error("reader gone"));
    wakePump?.();
    await pump;
    signal.removeEventListener("abort", onAbort);
  }
}
