/**
 * A frozen (or killed) worker under a client's stream, issue 42's reproduction:
 *   npx tsx bench/faults/frozen-worker.ts [--signal STOP|KILL] [--wait 60]
 * Starts a pooled stack of two workers (tiny model), opens a long streaming /v1/messages turn, finds
 * the worker decoding it (GET /admin/workers: the one with a request in it), sends it SIGSTOP (a
 * frozen or partitioned host: connections accepted, nothing answered) or SIGKILL, and reports how
 * long the client's stream stayed open and how it ended, bounded by --wait seconds; then how a new
 * conversation fares while that worker is still stopped. The worker gets SIGCONT before the stack
 * stops. Prints one line per fact.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { startStack } from "../../scripts/stack.ts";
import { DEV_API_KEY } from "../../shared/dev-secrets.ts";
import { decodeSseStream } from "../../test/support/sse-decoder.ts";
import { readPool } from "../workloads/load/pool-sampler.ts";

const { values } = parseArgs({
  options: { signal: { type: "string", default: "STOP" }, wait: { type: "string", default: "60" } },
});
const signal = values.signal === "KILL" ? "SIGKILL" : "SIGSTOP";
const waitMs = Number(values.wait) * 1000;
const t0 = performance.now();
const say = (line: string) =>
  process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);

/** A forced call of many fixed-length strings keeps the random model decoding for the whole budget. */
function longTurn(text: string): object {
  const properties = Object.fromEntries(
    Array.from({ length: 100 }, (_, i) => [`p${i}`, { type: "string", minLength: 32, maxLength: 32 }]),
  );
  return {
    model: "frontier-test",
    max_tokens: 4000,
    stream: true,
    tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
    tool_choice: { type: "tool", name: "essay" },
    messages: [{ role: "user", content: text }],
  };
}

/** Read a stream until it ends or `giveUp` resolves; what the client saw. */
async function watch(
  res: Response,
  onFirst: () => void,
  giveUp: Promise<"bound">,
): Promise<{ ended: "closed" | "bound"; events: string[]; endedAtMs: number }> {
  const events: string[] = [];
  const reader = decodeSseStream(res.body as ReadableStream<Uint8Array>)[Symbol.asyncIterator]();
  const bound = giveUp;
  let first = true;
  for (;;) {
    const next = await Promise.race([reader.next(), bound]);
    if (next === "bound") {
      void reader.return?.(undefined);
      return { ended: "bound", events, endedAtMs: performance.now() };
    }
    if (next.done) return { ended: "closed", events, endedAtMs: performance.now() };
    events.push(next.value.event === "error" ? `error ${next.value.data}` : next.value.event);
    if (first && next.value.event === "content_block_start") {
      first = false;
      onFirst();
    }
  }
}

const dir = mkdtempSync(join(tmpdir(), "frontier-frozen-"));
const stack = await startStack({
  workers: 2,
  edgeStateDir: join(dir, "edge"),
  sharedCheckpointDir: join(dir, "checkpoints"),
  workerEnv: { FRONTIER_MODEL_PATH: await ensureTestModel("tiny"), FRONTIER_CONTEXT_SIZE: "8192" },
  workerEnvFor: (id) => ({ FRONTIER_STATE_DIR: join(dir, id) }),
  supervise: signal === "SIGKILL",
});
let stopped: number | undefined;
try {
  for (
    let i = 0;
    i < 240 && (await readPool(stack.edgeUrl).catch(() => [])).filter((w) => w.state === "up").length < 2;
    i++
  )
    await new Promise((r) => setTimeout(r, 250));
  say(`stack up: edge ${stack.edgeUrl}, ${stack.workers.map((w) => `${w.id} pid ${w.process.pid}`).join(", ")}`);
  const post = (body: object, controller: AbortController) =>
    fetch(`${stack.edgeUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": DEV_API_KEY, "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
  const streamAbort = new AbortController();
  const res = await post(longTurn("write a long essay"), streamAbort);
  say(`stream opened: HTTP ${res.status}, x-frontier-cache ${res.headers.get("x-frontier-cache")}`);
  let stoppedAt = 0;
  // Give up --wait seconds after the signal (or 120 s after the stream opened if no worker was stopped).
  let giveUp: (value: "bound") => void = () => {};
  const bound = new Promise<"bound">((resolve) => {
    giveUp = resolve;
  });
  const fallback = setTimeout(() => giveUp("bound"), 120_000 + waitMs);
  const seen = watch(
    res,
    () =>
      void (async () => {
        // The worker decoding it is the one with a request in it (heartbeats every 500 ms).
        for (let i = 0; i < 20 && stopped === undefined; i++) {
          const busy = (await readPool(stack.edgeUrl)).find((w) => w.activeRequests > 0);
          const handle = stack.workers.find((w) => w.id === busy?.id);
          if (handle?.process.pid !== undefined) {
            stopped = handle.process.pid;
            process.kill(stopped, signal);
            stoppedAt = performance.now();
            setTimeout(() => giveUp("bound"), waitMs).unref();
            say(`${signal} sent to ${handle.id} (pid ${stopped}), the worker decoding the stream`);
            return;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      })(),
    bound,
  );
  const result = await seen;
  clearTimeout(fallback);
  const open = stoppedAt === 0 ? Number.NaN : (result.endedAtMs - stoppedAt) / 1000;
  const after = result.events.slice(-3).join(" | ");
  if (stoppedAt === 0) say(`the stream ended before a worker could be stopped: ${after}`);
  else if (result.ended === "bound" || open >= waitMs / 1000)
    say(
      `the client's stream was still open ${open.toFixed(1)} s after ${signal}, ${result.events.some((e) => e.startsWith("error")) ? "after an error event" : "no error event"} (gave up); last events: ${after}`,
    );
  else say(`the client's stream ended ${open.toFixed(1)} s after ${signal}; last events: ${after}`);
  streamAbort.abort();
  // A new conversation while the worker is still stopped: does it go to the other worker?
  const fresh = new AbortController();
  const timer = setTimeout(() => fresh.abort(), 60_000);
  const began = performance.now();
  const next = await post(
    { model: "frontier-test", max_tokens: 8, stream: true, messages: [{ role: "user", content: "hello" }] },
    fresh,
  )
    .then(async (r) => {
      const text = await r.text();
      return `HTTP ${r.status} in ${((performance.now() - began) / 1000).toFixed(1)} s, ${/message_stop/.test(text) ? "completed" : `no message_stop: ${text.slice(0, 200)}`}`;
    })
    .catch(() => `no answer within 60 s`);
  clearTimeout(timer);
  say(`a new conversation during the ${signal}: ${next}`);
  say(`pool now: ${JSON.stringify(await readPool(stack.edgeUrl))}`);
} finally {
  if (stopped !== undefined && signal === "SIGSTOP") process.kill(stopped, "SIGCONT");
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
