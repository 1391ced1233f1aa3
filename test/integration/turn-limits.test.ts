/**
 * Issue 30, M1, against a real stack (one worker, 2 sequences, two tenants):
 * - a turn past the worker's wall clock ends with the protocol's error event, not a silent
 *   truncation, and the worker and the conversation go on;
 * - while one tenant's burst of long generations holds the worker, another tenant's turn takes a
 *   sequence at once and finishes before any of the burst does (on main it queued behind the
 *   burst, FIFO, and waited for a running generation to end).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../edge/tenancy/auth.ts";
import { type Stack, startStack } from "../../scripts/stack.ts";
import { LOCAL_API_KEY, OTHER_TENANT_API_KEY, postJson } from "../support/api.ts";
import { decodeSseStream } from "../support/sse-decoder.ts";

let stack: Stack;
let stateDir = "";

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-turn-limits-"));
  stack = await startStack({
    edgeStateDir: join(stateDir, "edge"),
    edgeVars: {
      API_KEYS: JSON.stringify({
        [await sha256Hex(LOCAL_API_KEY)]: "local",
        [await sha256Hex(OTHER_TENANT_API_KEY)]: "other",
      }),
    },
    workerEnv: {
      FRONTIER_CONTEXT_SIZE: "16384",
      FRONTIER_SEQUENCES: "2",
      FRONTIER_TURN_TIME_LIMIT_S: "3",
      FRONTIER_STATE_DIR: join(stateDir, "worker"),
    },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** A forced call of `n` 32-character strings: the grammar keeps the random model sampling for a while. */
function longCall(n: number): Record<string, unknown> {
  const properties = Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`p${i}`, { type: "string", minLength: 32, maxLength: 32 }]),
  );
  return {
    model: "m",
    max_tokens: 8000,
    stream: true,
    tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
    tool_choice: { type: "tool", name: "essay" },
    messages: [{ role: "user", content: `Write the essay ${crypto.randomUUID()}.` }],
  };
}

interface Streamed {
  events: { event: string; data: Record<string, unknown> }[];
  firstContentAt: number;
  doneAt: number;
}

async function stream(body: Record<string, unknown>, apiKey = LOCAL_API_KEY): Promise<Streamed> {
  const res = await postJson(`${stack.edgeUrl}/v1/messages`, body, {
    headers: { "x-api-key": apiKey, "x-claude-code-session-id": crypto.randomUUID() },
  });
  expect(res.status).toBe(200);
  const out: Streamed = { events: [], firstContentAt: Number.NaN, doneAt: 0 };
  for await (const e of decodeSseStream(res.body as ReadableStream<Uint8Array>)) {
    if (e.event === "content_block_start" && Number.isNaN(out.firstContentAt)) out.firstContentAt = performance.now();
    out.events.push({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> });
  }
  out.doneAt = performance.now();
  return out;
}

describe("a turn's wall clock", () => {
  it("a turn past it ends with the protocol's error event, and the worker serves the next turn", async () => {
    const long = await stream(longCall(100));
    const last = long.events.at(-1);
    expect(last?.event).toBe("error");
    const error = last?.data.error as { type: string; message: string };
    expect(error.type).toBe("api_error");
    expect(error.message).toMatch(/3 s time limit/);
    expect(long.events.some((e) => e.event === "message_stop")).toBe(false);
    const next = await stream({ model: "m", max_tokens: 4, stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(next.events.at(-1)?.event).toBe("message_stop");
  }, 120_000);
});

describe("fairness between tenants", () => {
  it("another tenant's turn takes a sequence while one tenant's burst holds the worker", async () => {
    const short = { model: "m", max_tokens: 4, stream: true, messages: [{ role: "user", content: "quick one" }] };
    await stream(short, OTHER_TENANT_API_KEY); // the other tenant is active on this worker
    const started = performance.now();
    const burst = [0, 1, 2].map(() => stream(longCall(40)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const other = await stream(short, OTHER_TENANT_API_KEY);
    const done = await Promise.all(burst);
    expect(other.events.at(-1)?.event).toBe("message_stop");
    // The other tenant's whole turn ends before the first of the burst's does.
    expect(other.doneAt).toBeLessThan(Math.min(...done.map((d) => d.doneAt)));
    expect(other.doneAt - started).toBeLessThan(Math.min(...done.map((d) => d.doneAt)) - started);
  }, 180_000);
});
