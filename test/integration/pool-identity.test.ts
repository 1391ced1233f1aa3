/**
 * Pool identity with real processes (issue 30, H4): three GPU workers register with the edge, each
 * with its own credential — worker-1 (a static member, bound to exactly its URL), worker-2 (bound to
 * exactly its URL) and worker-3, the rogue, whose credential (issued at run time through
 * `npm run pool:credentials`) admits any loopback port. With the rogue's token, as code on its host
 * would, the test registers extra URLs, heartbeats worker-2's URL and id, takes the static worker's URL
 * and claims 1,000,000 sequences: each is refused (status and metric), the honest rows are unchanged,
 * a live session stays on its honest worker, and after the operator revokes the rogue's credential its
 * own heartbeats are refused and new sessions go to the honest workers only.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../edge/tenancy/auth.ts";
import {
  freePort,
  REPO_ROOT,
  type Stack,
  startStack,
  startWorker,
  stopChild,
  type WorkerHandle,
} from "../../scripts/stack.ts";
import { ADMIN_TOKEN, ToolLoop, until, workerOf } from "../support/pool-stack.ts";
import { parsePromText, sampleSum } from "../support/prom-text.ts";

interface Member {
  id: string;
  url: string;
  state: string;
  static: boolean;
  sequencesTotal: number;
}

let stack: Stack;
let stateDir = "";
let honest: WorkerHandle;
let rogue: WorkerHandle;
let rogueToken = "";
const workers = (): WorkerHandle[] => [...stack.workers, honest, rogue];
const workerEnv = (id: string) => ({
  FRONTIER_CONTEXT_SIZE: "4096",
  FRONTIER_SEQUENCES: "2",
  FRONTIER_ANCHOR_MIN_TOKENS: "64",
  FRONTIER_STATE_DIR: join(stateDir, id),
});

function credentialsCli(...args: string[]): { status: number | null; stdout: string } {
  const cli = spawnSync(
    process.execPath,
    [join(REPO_ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/pool-credentials.ts", ...args, "--edge", stack.edgeUrl],
    { cwd: REPO_ROOT, encoding: "utf8" },
  );
  return { status: cli.status, stdout: cli.stdout };
}

/** fetch, once more when the edge closed an idle keep-alive connection as it was reused (the request never arrived). */
async function edgeFetch(path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(`${stack.edgeUrl}${path}`, init);
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw error;
    return fetch(`${stack.edgeUrl}${path}`, init);
  }
}

async function members(): Promise<Member[]> {
  const res = await edgeFetch("/admin/workers", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const body = (await res.json()) as { regions: { workers: Member[] }[] };
  return body.regions.flatMap((r) => r.workers);
}

async function refusedCounts(): Promise<(reason: string) => number> {
  const res = await edgeFetch("/admin/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const samples = parsePromText(await res.text());
  return (reason) => sampleSum(samples, "frontier:pool_registrations_refused_total", { reason });
}

/** A heartbeat sent with the rogue's token (what code on the rogue's host can send). */
async function rogueBeat(fields: Record<string, unknown>): Promise<number> {
  const res = await edgeFetch("/internal/pool/heartbeat", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${rogueToken}` },
    body: JSON.stringify({
      id: "worker-3",
      region: "local",
      url: rogue.httpUrl,
      boot: "rogue",
      modelIdentity: "m",
      sequencesTotal: 2,
      sequencesFree: 2,
      ...fields,
    }),
  });
  await res.body?.cancel();
  return res.status;
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-pool-identity-"));
  const [port1, port2] = [await freePort(), await freePort()];
  const [token1, token2] = [randomBytes(24).toString("hex"), randomBytes(24).toString("hex")];
  stack = await startStack({
    workers: 1,
    pool: true,
    supervise: false,
    edgeStateDir: join(stateDir, "edge"),
    workerEnvFor: (id) => ({ ...workerEnv(id), FRONTIER_WORKER_HTTP_PORT: String(port1), FRONTIER_POOL_TOKEN: token1 }),
    edgeVars: {
      // As in a deployment: no shared pool token, one credential per worker.
      POOL_TOKEN_SHA256: "",
      POOL_WORKER_TOKENS: JSON.stringify({
        "worker-1": { sha256: await sha256Hex(token1), url: `http://127.0.0.1:${port1}`, capacity: 2 },
        "worker-2": { sha256: await sha256Hex(token2), url: `http://127.0.0.1:${port2}`, capacity: 2 },
      }),
    },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  const issued = credentialsCli("issue", "worker-3", "--url", "127.0.0.1", "--capacity", "2");
  expect(issued.status).toBe(0);
  rogueToken = (JSON.parse(issued.stdout) as { token: string }).token;
  const pooled = { FRONTIER_EDGE_URL: stack.edgeUrl, FRONTIER_HEARTBEAT_MS: "500" };
  [honest, rogue] = await Promise.all([
    startWorker({
      ...workerEnv("worker-2"),
      ...pooled,
      FRONTIER_WORKER_ID: "worker-2",
      FRONTIER_WORKER_HTTP_PORT: String(port2),
      FRONTIER_POOL_TOKEN: token2,
    }),
    startWorker({
      ...workerEnv("worker-3"),
      ...pooled,
      FRONTIER_WORKER_ID: "worker-3",
      FRONTIER_POOL_TOKEN: rogueToken,
    }),
  ]);
  const up = async () => (await members()).filter((w) => /^worker-[123]$/.test(w.id) && w.state === "up").length === 3;
  expect(await until(up)).toBe(true);
}, 240_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), honest && stopChild(honest.process), rogue && stopChild(rogue.process)]);
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe("pool identity with a rogue worker", () => {
  const loop = new ToolLoop("You are the pool identity test.", "Define: alpha");
  let owner: WorkerHandle | undefined;

  it("refuses every takeover the rogue's own credential tries; honest rows and sessions are unchanged", async () => {
    const first = await loop.turn(stack.edgeUrl);
    expect(first.status).toBe(200);
    owner = await workerOf(workers(), first.requestId);
    expect(["worker-1", "worker-2"]).toContain(owner?.id);
    const shape = (list: Member[]) =>
      list.filter((w) => w.id !== "worker-3").map((w) => [w.id, w.url, w.state, w.static, w.sequencesTotal]);
    const honestBefore = shape(await members());
    const was = await refusedCounts();

    // Extra URLs: its one row is alive elsewhere.
    for (let i = 0; i < 16; i++) expect(await rogueBeat({ url: `http://127.0.0.1:${await freePort()}` })).toBe(409);
    // Another worker's URL, then its id.
    expect(await rogueBeat({ url: honest.httpUrl, leaving: true })).toBe(409);
    expect(await rogueBeat({ id: "worker-2", url: honest.httpUrl, leaving: true })).toBe(401);
    // The static worker's URL.
    expect(await rogueBeat({ url: stack.workers[0]?.httpUrl, leaving: true })).toBe(403);
    // A million sequences.
    expect(await rogueBeat({ sequencesTotal: 1_000_000, sequencesFree: 1_000_000 })).toBe(403);

    expect(
      await until(async () => {
        const now = await refusedCounts();
        return (
          now("url-change") - was("url-change") === 16 &&
          now("url-taken") - was("url-taken") === 1 &&
          now("bad-token") - was("bad-token") === 1 &&
          now("static-worker") - was("static-worker") === 1 &&
          now("capacity-over-ceiling") - was("capacity-over-ceiling") === 1
        );
      }, 50),
    ).toBe(true);
    const after = await members();
    expect(shape(after)).toEqual(honestBefore);
    expect(after.map((w) => [w.id, w.url, w.state, w.static])).toEqual(
      expect.arrayContaining([
        ["worker-1", stack.workers[0]?.httpUrl, "up", true],
        ["worker-2", honest.httpUrl, "up", false],
      ]),
    );
    const rogueRows = after.filter((w) => w.id === "worker-3" || !/^worker-[12]$/.test(w.id));
    expect(rogueRows).toEqual([expect.objectContaining({ id: "worker-3", url: rogue.httpUrl, sequencesTotal: 2 })]);

    // The live session stays on its honest worker, continued live at the same epoch.
    const second = await loop.turn(stack.edgeUrl);
    expect(second.status).toBe(200);
    expect(second.route).toContain("epoch=1");
    expect(second.cache).toContain("decision=live-tool-ids");
    expect(await workerOf(workers(), second.requestId)).toBe(owner);
  });

  it("revoked by the operator, the rogue's heartbeats are refused and new sessions go to the honest workers", async () => {
    const was = await refusedCounts();
    const revoked = credentialsCli("revoke", "worker-3");
    expect(revoked.status).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: "worker-3", revoked: true });
    const listed = credentialsCli("list");
    expect(listed.stdout).not.toContain(rogueToken);
    const credentials = (JSON.parse(listed.stdout) as { credentials: { id: string; revoked_at: number | null }[] })
      .credentials;
    expect(credentials.find((c) => c.id === "worker-3")?.revoked_at).toEqual(expect.any(Number));
    // The rogue process keeps heartbeating every 500 ms: each is refused, and its row stays down.
    expect(await until(async () => (await refusedCounts())("revoked") - was("revoked") >= 2, 50)).toBe(true);
    expect((await members()).find((w) => w.id === "worker-3")?.state).toBe("down");
    for (let i = 0; i < 4; i++) {
      const res = await new ToolLoop(`After the revocation, agent ${i}.`, `Define: word ${i}`).turn(stack.edgeUrl);
      expect(res.status).toBe(200);
      expect(["worker-1", "worker-2"]).toContain((await workerOf(workers(), res.requestId))?.id);
    }
    expect(rogue.logs.some((l) => l.includes("pool heartbeat failing") && l.includes("401"))).toBe(true);
  });
});
