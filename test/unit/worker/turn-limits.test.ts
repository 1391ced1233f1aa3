import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type LimitHit, limitTurn, type TurnLimits } from "../../../gpu-worker/turn/turn-limits.ts";
import {
  type GenerateEvent,
  GenerateEventSchema,
  StopReason,
  WorkerErrorCode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const text = (t: string): GenerateEvent =>
  create(GenerateEventSchema, { event: { case: "textDelta", value: { text: t } } });
const stop = (reason: StopReason): GenerateEvent =>
  create(GenerateEventSchema, { event: { case: "stop", value: { reason } } });
const limitError = (hit: LimitHit): GenerateEvent =>
  create(GenerateEventSchema, {
    event: { case: "error", value: { code: WorkerErrorCode.INTERNAL, message: `limit: ${hit}`, param: "" } },
  });

/** A turn that emits one text event per `everyMs` until cancelled, then records and stops (as the sampler does). */
function fakeTurn(log: { cancelledAfter?: number; released?: boolean }, everyMs: number, max = 10_000) {
  return async function* (signal: AbortSignal): AsyncGenerator<GenerateEvent> {
    let n = 0;
    try {
      while (n < max && !signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, everyMs));
        yield text(`t${n++}`);
      }
      if (signal.aborted) log.cancelledAfter = n;
      yield stop(signal.aborted ? StopReason.CANCELLED : StopReason.END_TURN);
    } finally {
      log.released = true;
    }
  };
}

const limits = (over: Partial<TurnLimits>): TurnLimits => ({ wallClockMs: 0, stallMs: 0, aheadEvents: 8, ...over });

describe("limitTurn", () => {
  it("passes a turn within its limits through unchanged", async () => {
    const seen: GenerateEvent[] = [];
    const state = {};
    for await (const e of limitTurn(
      fakeTurn(state, 1, 5),
      new AbortController().signal,
      limits({ wallClockMs: 5_000, stallMs: 5_000 }),
      limitError,
      "r",
    ))
      seen.push(e);
    expect(seen.map((e) => e.event.case)).toEqual([
      "textDelta",
      "textDelta",
      "textDelta",
      "textDelta",
      "textDelta",
      "stop",
    ]);
  });

  it("ends a turn past its wall clock with the error event in place of the stop, after releasing it", async () => {
    const state: { cancelledAfter?: number; released?: boolean } = {};
    const seen: GenerateEvent[] = [];
    for await (const e of limitTurn(
      fakeTurn(state, 5),
      new AbortController().signal,
      limits({ wallClockMs: 60 }),
      limitError,
      "r",
    ))
      seen.push(e);
    const last = seen.at(-1);
    expect(last?.event.case).toBe("error");
    expect(last?.event.case === "error" && last.event.value.message).toBe("limit: wall-clock");
    expect(seen.some((e) => e.event.case === "stop")).toBe(false);
    expect(state.cancelledAfter).toBeGreaterThan(0);
    expect(state.released).toBe(true);
  });

  it("cancels a turn whose reader stops reading, once the read-ahead is full for the stall time", async () => {
    const state: { cancelledAfter?: number; released?: boolean } = {};
    const turn = limitTurn(
      fakeTurn(state, 1),
      new AbortController().signal,
      limits({ stallMs: 80, aheadEvents: 4 }),
      limitError,
      "r",
    );
    expect((await turn.next()).value?.event.case).toBe("textDelta");
    // The reader goes quiet: the turn runs 4 events ahead, then waits, then is cancelled and released.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(state.released).toBe(true);
    expect(state.cancelledAfter).toBeLessThanOrEqual(6);
    // The reader comes back: it gets what was buffered, then the end.
    const rest: GenerateEvent[] = [];
    for await (const e of turn) rest.push(e);
    expect(rest.length).toBeLessThanOrEqual(5);
    expect(rest.every((e) => e.event.case === "textDelta")).toBe(true);
  });

  it("a slow but steady reader is never cut off", async () => {
    const state: { cancelledAfter?: number } = {};
    const turn = limitTurn(
      fakeTurn(state, 1, 12),
      new AbortController().signal,
      limits({ stallMs: 100, aheadEvents: 2 }),
      limitError,
      "r",
    );
    const seen: GenerateEvent[] = [];
    for await (const e of turn) {
      seen.push(e);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    expect(seen).toHaveLength(13);
    expect(state.cancelledAfter).toBeUndefined();
  });

  it("the caller's abort (client gone) cancels the turn and releases it before returning", async () => {
    const state: { cancelledAfter?: number; released?: boolean } = {};
    const client = new AbortController();
    const turn = limitTurn(fakeTurn(state, 2), client.signal, limits({}), limitError, "r");
    await turn.next();
    client.abort();
    await turn.return(undefined);
    expect(state.released).toBe(true);
  });
});

describe("limitTurn, a cut before sampling", () => {
  it("a turn that fails because the wall clock cut it (in prefill) still ends with the limit's error event", async () => {
    const prefill = async function* (signal: AbortSignal): AsyncGenerator<GenerateEvent> {
      yield text("keep-alive");
      await new Promise((resolve) => setTimeout(resolve, 200));
      signal.throwIfAborted();
      yield stop(StopReason.END_TURN);
    };
    const seen: GenerateEvent[] = [];
    for await (const e of limitTurn(
      prefill,
      new AbortController().signal,
      limits({ wallClockMs: 50 }),
      limitError,
      "r",
    ))
      seen.push(e);
    expect(seen.map((e) => e.event.case)).toEqual(["textDelta", "error"]);
  });

  it("any other failure is passed on", async () => {
    const broken = async function* (): AsyncGenerator<GenerateEvent> {
      yield text("x");
      throw new Error("engine broke");
    };
    const turn = limitTurn(broken, new AbortController().signal, limits({ wallClockMs: 5_000 }), limitError, "r");
    await expect(
      (async () => {
        for await (const _ of turn);
      })(),
    ).rejects.toThrow("engine broke");
  });
});
