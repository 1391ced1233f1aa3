/**
 * The worker pool with real processes on real sockets: two GPU workers registered with the edge's
 * PoolDO and sharing one checkpoint directory. Placement by prefix, then load; 20 concurrent tool
 * loops that each continue live on the worker that owns them; a worker killed mid-stream (its
 * sessions continue on the other from their checkpoints); a drain through the CLI; tenant isolation.
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_ID_SECRET } from "../../gpu-worker/config.ts";
import { REPO_ROOT, stopChild, type WorkerHandle } from "../../scripts/stack.ts";
import { verifyId } from "../../shared/ids.ts";
import { OTHER_TENANT_API_KEY, postJson } from "../support/api.ts";
import {
  adminWorkers,
  logLines,
  type PoolStack,
  restartWorker,
  startPoolStack,
  ToolLoop,
  type TurnResult,
  tool,
  until,
  workerOf,
} from "../support/pool-stack.ts";

let pool: PoolStack;
let edgeUrl = "";
let restarted: WorkerHandle | undefined;
const owners = new Map<ToolLoop, WorkerHandle>();
const loops: ToolLoop[] = [];

beforeAll(async () => {
  pool = await startPoolStack();
  edgeUrl = pool.stack.edgeUrl;
  // Both workers have sent a heartbeat (their reported ids replace the static entries' URLs).
  expect(await until(async () => (await adminWorkers(edgeUrl)).filter((w) => /^worker-/.test(w.id)).length === 2)).toBe(
    true,
  );
}, 240_000);

afterAll(async () => {
  await pool?.stack.stop();
  if (restarted) await stopChild(restarted.process);
  if (pool) rmSync(pool.stateDir, { recursive: true, force: true });
});

const sid8 = async (loop: ToolLoop) =>
  (await verifyId(DEV_ID_SECRET, loop.pending[0] ?? "", "local"))?.session.slice(0, 8) ?? "";

/** A tool-loop turn succeeded and ended in a tool call (so the next turn answers it). */
async function expectOk(result: TurnResult): Promise<void> {
  if (result.status !== 200) throw new Error(`turn failed: ${result.status} ${JSON.stringify(result.error)}`);
  expect(result.stopReason).toBe("tool_use");
}

interface ResponsesTurn {
  requestId: string;
  cache: string;
  body: { id: string; output: { type: string; call_id: string }[] };
}

/** One non-streaming /v1/responses call with the pool test's tool. */
async function respond(body: Record<string, unknown>): Promise<ResponsesTurn> {
  const res = await fetch(`${edgeUrl}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-frontier-local" },
    body: JSON.stringify({
      model: "m",
      instructions: "You are the Responses pool test.",
      tools: [{ type: "function", name: tool.name, description: tool.description, parameters: tool.input_schema }],
      temperature: 0,
      max_output_tokens: 120,
      ...body,
    }),
  });
  expect(res.status).toBe(200);
  return {
    requestId: res.headers.get("x-request-id") ?? "",
    cache: res.headers.get("x-frontier-cache") ?? "",
    body: (await res.json()) as ResponsesTurn["body"],
  };
}

describe("GPU worker pool", () => {
  it("places a new session next to the worker holding its prefix checkpoint", async () => {
    const system = `You are the placement test assistant. ${"Answer with one tool call. ".repeat(6)}`;
    const first = new ToolLoop(system, "Define: alpha");
    const res = await first.turn(edgeUrl);
    await expectOk(res);
    const holder = await workerOf(pool.stack.workers, res.requestId);
    if (!holder) throw new Error("no worker served the first turn");
    expect(await until(() => logLines(holder, "reason=cold-anchor", /checkpoint saved/).length > 0)).toBe(true);
    expect(
      await until(async () => (await adminWorkers(edgeUrl)).some((w) => w.id === holder.id && w.prefixes.length > 0)),
    ).toBe(true);
    for (const word of ["beta", "gamma", "delta"]) {
      // The pool counts sessions placed since a worker's last heartbeat as its turns (placement.ts
      // `turns`): wait for the holder's next heartbeat, so a fast host's finished turns don't count.
      expect(
        await until(async () => (await adminWorkers(edgeUrl)).some((w) => w.id === holder.id && w.pending === 0)),
      ).toBe(true);
      const next = await new ToolLoop(system, `Define: ${word}`).turn(edgeUrl);
      await expectOk(next);
      expect(next.route).toContain("placement=prefix");
      expect(next.cache).toContain("decision=checkpoint");
      expect((await workerOf(pool.stack.workers, next.requestId))?.id).toBe(holder.id);
    }
    // Another prefix goes by load: to the other worker, which holds nothing yet.
    const other = await new ToolLoop("A different system prompt.", "Define: omega").turn(edgeUrl);
    await expectOk(other);
    expect(other.route).toContain("placement=load");
    expect((await workerOf(pool.stack.workers, other.requestId))?.id).not.toBe(holder.id);
  });

  it("spreads 20 concurrent tool loops; every continuation is a live match on the owning worker", async () => {
    for (let i = 0; i < 20; i++) loops.push(new ToolLoop(`You are agent number ${i}.`, `Task ${i}: define a word.`));
    const firsts = await Promise.all(loops.map((loop) => loop.turn(edgeUrl)));
    for (const [i, res] of firsts.entries()) {
      await expectOk(res);
      const owner = await workerOf(pool.stack.workers, res.requestId);
      if (!owner) throw new Error(`no owner for loop ${i}`);
      owners.set(loops[i] as ToolLoop, owner);
    }
    for (const worker of pool.stack.workers) {
      expect([...owners.values()].filter((w) => w === worker).length).toBeGreaterThanOrEqual(4);
    }
    const seconds = await Promise.all(loops.map((loop) => loop.turn(edgeUrl)));
    for (const [i, res] of seconds.entries()) {
      await expectOk(res);
      expect(res.cache).toContain("decision=live-tool-ids");
      expect(res.route).toContain("epoch=1");
      const owner = owners.get(loops[i] as ToolLoop);
      expect(await workerOf(pool.stack.workers, res.requestId)).toBe(owner);
      expect(
        logLines(owner as WorkerHandle, `request=${res.requestId}`, /live continuation match=tool-output-ids/),
      ).toHaveLength(1);
    }
  });

  it("kills a worker mid-stream: the stream ends with api_error and its sessions continue on the other worker", async () => {
    // Every turn-2 session checkpoint (its frontier: user, assistant, tool results) has landed in the
    // shared store: the tool-frontier write, or parking (which cancels a write not yet started). A
    // turn-1 write may have been cancelled by turn 2 arriving first.
    for (const loop of loops) {
      const owner = owners.get(loop) as WorkerHandle;
      const session = await sid8(loop);
      const saved = () =>
        logLines(owner, `session=${session}`, /checkpoint saved reason=(tool-frontier|parked) .*messages=3 /).length;
      if (!(await until(() => saved() >= 1))) {
        throw new Error(
          `session ${session}: ${saved()} saves\n${owner.logs.filter((l) => l.includes(session)).join("\n")}`,
        );
      }
    }
    const hint = crypto.randomUUID();
    // A forced call whose grammar needs ~1,400 bytes of JSON: still running when the worker dies.
    const properties = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: "string", minLength: 32, maxLength: 32 }]),
    );
    const essay = {
      name: "essay",
      description: "Write",
      input_schema: { type: "object", properties, required: Object.keys(properties) },
    };
    const long = {
      model: "m",
      max_tokens: 20000,
      tools: [essay],
      tool_choice: { type: "tool", name: "essay" },
      messages: [{ role: "user", content: "Write the essay." }],
    };
    const res = await postJson(
      `${edgeUrl}/v1/messages`,
      { ...long, stream: true },
      { headers: { "x-claude-code-session-id": hint } },
    );
    expect(res.status).toBe(200);
    const dying = await workerOf(pool.stack.workers, res.headers.get("request-id") ?? "");
    if (!dying) throw new Error("no worker took the stream");
    const survivor = pool.stack.workers.find((w) => w !== dying) as WorkerHandle;
    const reader = res.body!.getReader();
    let text = "";
    // The stream has started (message_start); the ~1,100-token call is still being sampled.
    while (!text.includes("message_start")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    dying.process.kill("SIGKILL");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).not.toContain("message_stop");
    // Not overloaded_error: the request may be what killed the worker, so nothing invites a retry.
    expect(text).toMatch(/event: error\ndata: .*"api_error"/);
    // A client that retries anyway is served by the other worker.
    const retry = await postJson(
      `${edgeUrl}/v1/messages`,
      { ...long, max_tokens: 4 },
      { headers: { "x-claude-code-session-id": hint } },
    );
    expect(retry.status).toBe(200);
    expect(retry.headers.get("x-frontier-route")).toMatch(/epoch=2/);
    expect(await workerOf([survivor], retry.headers.get("request-id") ?? "")).toBe(survivor);

    const moved = loops.filter((loop) => owners.get(loop) === dying);
    const stayed = loops.filter((loop) => owners.get(loop) === survivor);
    const movedSessions = await Promise.all(moved.map(sid8));
    // A tool-results-only request continues from the tool-frontier checkpoint the dead worker wrote.
    const resultsOnly = await (moved[0] as ToolLoop).turn(edgeUrl, { onlyResults: true });
    await expectOk(resultsOnly);
    const rest = await Promise.all([...moved.slice(1), ...stayed].map((loop) => loop.turn(edgeUrl)));
    for (const res of [resultsOnly, ...rest]) {
      await expectOk(res);
      expect(res.cache).toContain("decision=live-tool-ids");
      expect(await workerOf([survivor], res.requestId)).toBe(survivor);
    }
    for (const res of [resultsOnly, ...rest.slice(0, moved.length - 1)]) expect(res.route).toContain("epoch=2");
    for (const res of rest.slice(moved.length - 1)) expect(res.route).toContain("epoch=1");
    for (const session of movedSessions) {
      expect(logLines(survivor, `session=${session}`, /kv cache hit checkpoint/).length).toBeGreaterThan(0);
    }
    for (const loop of moved) owners.set(loop, survivor);
  });

  it("drains a worker through the CLI: it hands every session over and reports empty; no turn is lost", async () => {
    const draining = pool.stack.workers.find(
      (w) => w.process.exitCode === null && w.process.signalCode === null,
    ) as WorkerHandle;
    const dead = pool.stack.workers.find((w) => w !== draining) as WorkerHandle;
    // A Responses API conversation on the worker about to drain (the only one up right now).
    const responsesTurn = await respond({ input: "Define: omega", tool_choice: "required" });
    expect(await workerOf([draining], responsesTurn.requestId)).toBe(draining);
    restarted = await restartWorker(pool, dead.id);
    const fresh = restarted;
    expect(
      await until(async () => (await adminWorkers(edgeUrl)).some((w) => w.url === fresh.httpUrl && w.state === "up")),
    ).toBe(true);
    const cli = spawnSync(
      process.execPath,
      [join(REPO_ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/drain.ts", draining.id, "--edge", edgeUrl],
      {
        cwd: REPO_ROOT,
        encoding: "utf8",
      },
    );
    expect(cli.status).toBe(0);
    const report = JSON.parse(cli.stdout) as Record<string, number | string>;
    expect(report).toMatchObject({ state: "drained", resident_sessions: 0 });
    expect(report.handed_over).toBeGreaterThan(0);
    expect(report.moved).toBe(report.handed_over);
    expect(report.checkpointed).toBe(report.handed_over);
    const turns = await Promise.all(loops.map((loop) => loop.turn(edgeUrl)));
    for (const res of turns) {
      await expectOk(res);
      expect(res.cache).toContain("decision=live-tool-ids");
      expect(await workerOf([fresh], res.requestId)).toBe(fresh);
    }
    // previous_response_id survives the drain: the handed-over session continues live on the new worker.
    const continued = await respond({
      previous_response_id: responsesTurn.body.id,
      input: responsesTurn.body.output
        .filter((item) => item.type === "function_call")
        .map((item) => ({ type: "function_call_output", call_id: item.call_id, output: "a letter" })),
      max_output_tokens: 4,
    });
    expect(continued.cache).toContain("decision=live-tool-ids");
    expect(await workerOf([fresh], continued.requestId)).toBe(fresh);
    const after = await new ToolLoop("After the drain.", "Define: zeta").turn(edgeUrl);
    await expectOk(after);
    expect(await workerOf([fresh], after.requestId)).toBe(fresh);
  });

  it("never routes one tenant's request to another tenant's session, whatever IDs it carries", async () => {
    const loop = loops[0] as ToolLoop;
    const session = await sid8(loop);
    const stolen = new ToolLoop(loop.system, "");
    stolen.messages.splice(0, stolen.messages.length, ...structuredClone(loop.messages));
    const res = await stolen.turn(edgeUrl, { onlyResults: true, apiKey: OTHER_TENANT_API_KEY });
    expect(res.status).toBe(400);
    expect(res.error?.type).toBe("invalid_request_error");
    expect(res.error?.message).toContain(loop.pending[0]);
    for (const worker of [...pool.stack.workers, restarted]) {
      if (worker)
        expect(logLines(worker, `request=${res.requestId}`, new RegExp(`session=${session}`))).toHaveLength(0);
    }
    // The owner's conversation is untouched: it still continues live.
    const next = await loop.turn(edgeUrl);
    await expectOk(next);
    expect(next.cache).toContain("decision=live-tool-ids");
  });
});
