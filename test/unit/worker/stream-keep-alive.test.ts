/**
 * The worker's liveness keep-alives (gpu-worker/turn/stream-keep-alive.ts): a turn that is silent
 * (queued for a sequence, restoring, planning) still sends an event every interval, so the edge's
 * idle deadline never cuts a live worker's stream; events pass through unchanged and in order; a
 * reader that leaves ends the turn.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { withKeepAlive } from "../../../gpu-worker/turn/stream-keep-alive.ts";
import { type GenerateEvent, GenerateEventSchema } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const text = (t: string) => create(GenerateEventSchema, { event: { case: "textDelta", value: { text: t } } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kinds = (events: GenerateEvent[]) =>
  events.map((e) => (e.event.case === "textDelta" ? e.event.value.text : String(e.event.case)));

describe("withKeepAlive", () => {
  it("fills a silence longer than the interval with keep-alives and passes every event through in order", async () => {
    async function* turn() {
      yield text("a");
      await sleep(120); // queued for a sequence: silent for several intervals
      yield text("b");
      yield text("c");
    }
    const out: GenerateEvent[] = [];
    for await (const event of withKeepAlive(turn(), 20)) out.push(event);
    const seen = kinds(out);
    expect(seen.filter((k) => k !== "keepAlive")).toEqual(["a", "b", "c"]);
    expect(seen.indexOf("keepAlive")).toBeGreaterThan(seen.indexOf("a"));
    expect(seen.lastIndexOf("keepAlive")).toBeLessThan(seen.indexOf("b"));
    expect(seen.filter((k) => k === "keepAlive").length).toBeGreaterThanOrEqual(2);
  });

  it("adds nothing to a turn that never goes quiet, nor with the interval 0", async () => {
    async function* busy() {
      for (let i = 0; i < 5; i++) yield text(String(i));
    }
    const fast: GenerateEvent[] = [];
    for await (const event of withKeepAlive(busy(), 1000)) fast.push(event);
    expect(kinds(fast)).toEqual(["0", "1", "2", "3", "4"]);
    async function* slow() {
      await sleep(30);
      yield text("x");
    }
    const off: GenerateEvent[] = [];
    for await (const event of withKeepAlive(slow(), 0)) off.push(event);
    expect(kinds(off)).toEqual(["x"]);
  });

  it("ends the turn when the reader leaves, also while the turn is silent", async () => {
    let finished = false;
    let release: () => void = () => undefined;
    async function* turn() {
      try {
        yield text("a");
        await new Promise<void>((resolve) => {
          release = resolve; // a turn that notices the cancel (its signal) and returns
        });
        yield text("never read");
      } finally {
        finished = true;
      }
    }
    const stream = withKeepAlive(turn(), 10);
    expect(kinds([(await stream.next()).value as GenerateEvent])).toEqual(["a"]);
    expect(kinds([(await stream.next()).value as GenerateEvent])).toEqual(["keepAlive"]);
    const leaving = stream.return(undefined);
    release();
    await leaving;
    expect(finished).toBe(true);
  });
});
