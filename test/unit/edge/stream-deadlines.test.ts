/**
 * The Generate stream's deadline clock (edge/worker/stream-deadlines.ts `within`) counts the time the
 * worker had to answer, not the time the edge itself was too busy to look. At 256 agents on a crowded
 * host the edge's event loop lagged by tens of seconds; the worker's headers had arrived, but the 5 s
 * connect timer ran first, so healthy, idle workers were cut and marked down thousands of times and
 * the pool served 6 of 772 turns (docs/bench/history/issue-42-load.md, "After"). Here the event loop
 * is blocked past the deadline while the answer is already queued behind the timer.
 */
import { describe, expect, it } from "vitest";
import { within } from "../../../edge/worker/stream-deadlines.ts";

/** Hold this thread for `ms`: the edge busy with other requests, the deadline's timer falling due meanwhile. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning
  }
}

const cut = () => new Error("deadline");

describe("within: a deadline counts the worker's time, not the edge's own lag", () => {
  it("lets an answer that came while the edge was busy win over a timer that fell due meanwhile", async () => {
    // From a check-phase callback: the answer below (an immediate) is then delivered in the next loop
    // turn, after that turn's timers, as an I/O event queued behind a timer that fell due.
    await new Promise((resolve) => setImmediate(resolve));
    let answer: (value: string) => void = () => undefined;
    const answered = new Promise<string>((resolve) => {
      answer = resolve;
    });
    let cancelled = false;
    const call = within(answered, 100, cut, () => {
      cancelled = true;
    });
    // The worker answered at once, but the thread is busy for three deadlines' worth first.
    setImmediate(() => answer("headers"));
    busy(300);
    await expect(call).resolves.toBe("headers");
    expect(cancelled).toBe(false);
  });

  it("still cuts a silent worker, whether or not the edge was busy meanwhile", async () => {
    const silent = new Promise<never>(() => undefined);
    let cancelled = 0;
    await expect(within(silent, 60, cut, () => cancelled++)).rejects.toThrow("deadline");
    expect(cancelled).toBe(1);
    // A busy spell is not counted as the worker's silence, but the deadline still comes.
    const lagged = within(silent, 60, cut, () => cancelled++);
    busy(200);
    await expect(lagged).rejects.toThrow("deadline");
    expect(cancelled).toBe(2);
  });
});
