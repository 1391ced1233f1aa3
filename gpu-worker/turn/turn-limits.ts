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
  const turn = new LimitedTurn(signal, limits, requestId);
  const pump = turn.pump(start);
  try {
    for (;;) {
      const event = turn.take();
      if (event !== undefined) {
        yield turn.hit === "wall-clock" && event.event.case === "stop" ? limitError("wall-clock") : event;
        continue;
      }
      if (turn.done) break;
      await turn.waitForEvent();
    }
    // A turn cut before it could sample (during prefill, say) fails with the cut as its reason.
    if (turn.failure !== undefined) {
      if (turn.hit === "wall-clock") yield limitError("wall-clock");
      else if (turn.hit !== "stall") throw turn.failure.error;
    }
  } finally {
    // The reader left (or the turn ended): cancel what still runs and let it settle before returning,
    // so the session is released before the RPC completes.
    turn.end();
    await pump;
  }
}

/** The state between the turn (the pump, producing into a bounded buffer) and its reader. */
class LimitedTurn {
  readonly cancel = new AbortController();
  hit: LimitHit | undefined;
  done = false;
  failure: { error: unknown } | undefined;
  private readonly buffer: GenerateEvent[] = [];
  private wakeReader: (() => void) | undefined;
  private wakePump: (() => void) | undefined;
  private stall: ReturnType<typeof setTimeout> | undefined;
  private readonly wall: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort = () => {
    this.cancel.abort(this.signal.reason);
    this.wakePump?.();
  };

  constructor(
    private readonly signal: AbortSignal,
    private readonly limits: TurnLimits,
    private readonly requestId: string,
  ) {
    signal.addEventListener("abort", this.onAbort, { once: true });
    this.wall = limits.wallClockMs > 0 ? setTimeout(() => this.stop("wall-clock"), limits.wallClockMs) : undefined;
  }

  /** Run the turn into the buffer; past `aheadEvents` unread events, wait (and start the stall clock). */
  async pump(start: (signal: AbortSignal) => AsyncGenerator<GenerateEvent>): Promise<void> {
    try {
      for await (const event of start(this.cancel.signal)) {
        if (this.hit === "stall") continue; // nobody reads any more: let the turn finish and record
        this.buffer.push(event);
        this.wakeReader?.();
        while (this.buffer.length >= this.limits.aheadEvents && this.hit === undefined && !this.signal.aborted) {
          if (this.limits.stallMs > 0 && this.stall === undefined)
            this.stall = setTimeout(() => this.stop("stall"), this.limits.stallMs);
          await new Promise<void>((resolve) => {
            this.wakePump = resolve;
          });
        }
      }
    } catch (error) {
      this.failure = { error };
    } finally {
      this.done = true;
      this.wakeReader?.();
    }
  }

  /** The next buffered event, if any (the reader took one: the stall clock stops). */
  take(): GenerateEvent | undefined {
    const event = this.buffer.shift();
    if (event === undefined) return undefined;
    clearTimeout(this.stall);
    this.stall = undefined;
    this.wakePump?.();
    return event;
  }

  async waitForEvent(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wakeReader = resolve;
    });
    this.wakeReader = undefined;
  }

  end(): void {
    clearTimeout(this.wall);
    clearTimeout(this.stall);
    if (!this.done) this.cancel.abort(new Error("reader gone"));
    this.wakePump?.();
    this.signal.removeEventListener("abort", this.onAbort);
  }

  private stop(why: LimitHit): void {
    if (this.hit !== undefined || this.cancel.signal.aborted) return;
    this.hit = why;
    log(why === "wall-clock" ? "turn reached its wall-clock limit" : "turn cancelled: its reader stalled", {
      request: this.requestId,
      limitMs: why === "wall-clock" ? this.limits.wallClockMs : this.limits.stallMs,
    });
    this.cancel.abort(new TurnCut(why));
    this.wakePump?.();
  }
}
