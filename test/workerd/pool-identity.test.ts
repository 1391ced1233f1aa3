/**
 * Pool identity (issue 30, H4): one worker credential registers exactly one row, keyed by its worker
 * id; it cannot change another worker's row, take a static (configured) worker's URL, move a live row
 * or claim more sequences than its ceiling; every refusal is counted by reason; operators issue, list
 * and revoke credentials, and a revoked worker gets no placement and no heartbeat.
 * The static member here is WORKER_URLS = http://127.0.0.1:1 (vitest.workerd.config.ts).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { DEV_POOL_TOKEN } from "../../shared/dev-secrets.ts";
import { parsePromText, sampleSum } from "../support/prom-text.ts";
import { call, idleWorkerReport } from "./helpers.ts";

const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
const STATIC_URL = "http://127.0.0.1:1";
const HONEST_URL = "http://10.0.7.1:1";
const ROGUE_URL = "http://10.0.7.50:1";
const ARGS = { region: "local", staticUrls: [STATIC_URL], timeoutMs: 60_000 };

function admin(path: string, method = "GET", body?: unknown): Promise<Response> {
  return call(path, { method, key: ADMIN_TOKEN, bearer: true, body });
}

async function issue(id: string, url: string, capacity: number): Promise<string> {
  const response = await admin("/admin/worker-credentials", "POST", { id, url, capacity });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

function heartbeat(token: string, fields: Record<string, unknown>): Promise<Response> {
  return call("/internal/pool/heartbeat", {
    method: "POST",
    key: null,
    headers: { authorization: `Bearer ${token}` },
    body: idleWorkerReport(fields),
  });
}

async function refusal(response: Response): Promise<{ status: number; type: string; message: string }> {
  const body = (await response.json()) as { error: { type: string; message: string } };
  return { status: response.status, ...body.error };
}

const members = () => env.POOLS.getByName("pool:local").view(ARGS);

async function refusedCounts(): Promise<(reason: string) => number> {
  const text = await (await admin("/admin/metrics")).text();
  const samples = parsePromText(text);
  return (reason) => sampleSum(samples, "frontier:pool_registrations_refused_total", { reason });
}

// One sequence of events, as an attacker holding one credential would run it (storage is per file).
let honest = "";
let rogue = "";
let staticOwner = "";

describe("pool identity", () => {
  it("issues credentials to operators only, and never lists a token", async () => {
    expect((await call("/admin/worker-credentials", { key: null })).status).toBe(401);
    const denied = await call("/admin/worker-credentials", {
      method: "POST",
      key: DEV_POOL_TOKEN,
      bearer: true,
      body: { id: "x", url: HONEST_URL },
    });
    expect(denied.status).toBe(401);
    honest = await issue("gpu-honest", HONEST_URL, 8);
    // The rogue's binding is a range that covers the honest worker and the static member too.
    rogue = await issue("gpu-rogue", "10.0.7.0/24,127.0.0.0/8", 4);
    staticOwner = await issue("gpu-static", STATIC_URL, 8);
    expect(rogue).toMatch(/^fpw_[A-Za-z0-9_-]{43}$/);
    const again = await admin("/admin/worker-credentials", "POST", { id: "gpu-rogue", url: ROGUE_URL });
    expect(again.status).toBe(409);
    const env409 = await admin("/admin/worker-credentials", "POST", { id: "worker-bound", url: ROGUE_URL });
    expect(env409.status).toBe(409);
    for (const bad of [
      { id: "a/b", url: ROGUE_URL },
      { id: "y", url: "ftp://x" },
      { id: "y", url: ROGUE_URL, capacity: 0 },
    ]) {
      const res = await admin("/admin/worker-credentials", "POST", bad);
      expect(res.status).toBe(400);
      expect((await refusal(res)).type).toBe("invalid_request_error");
    }
    const listed = await admin("/admin/worker-credentials");
    const text = await listed.text();
    for (const token of [honest, rogue, staticOwner]) expect(text).not.toContain(token);
    const { credentials } = JSON.parse(text) as { credentials: { id: string; source: string; read_only: boolean }[] };
    expect(credentials.map((c) => [c.id, c.source, c.read_only])).toEqual([
      ["worker-bound", "env", true],
      ["gpu-honest", "runtime", false],
      ["gpu-rogue", "runtime", false],
      ["gpu-static", "runtime", false],
    ]);
  });

  it("registers one row per credential: a live worker cannot add or move to other URLs", async () => {
    expect((await heartbeat(honest, { id: "gpu-honest", url: HONEST_URL })).status).toBe(200);
    expect((await heartbeat(rogue, { id: "gpu-rogue", url: ROGUE_URL })).status).toBe(200);
    const was = await refusedCounts();
    for (let i = 0; i < 16; i++) {
      const res = await heartbeat(rogue, { id: "gpu-rogue", url: `http://10.0.7.${100 + i}:1` });
      expect(await refusal(res)).toMatchObject({ status: 409, type: "invalid_request_error" });
    }
    // Another id with the rogue's token is not its credential.
    const other = await heartbeat(rogue, { id: "gpu-rogue-2", url: "http://10.0.7.99:1" });
    expect(await refusal(other)).toMatchObject({ status: 401, type: "authentication_error" });
    const rows = (await members()).filter((w) => w.url.startsWith("http://10.0.7."));
    expect(rows.map((w) => [w.id, w.url, w.state])).toEqual([
      ["gpu-honest", HONEST_URL, "up"],
      ["gpu-rogue", ROGUE_URL, "up"],
    ]);
    await vi.waitFor(async () => {
      const now = await refusedCounts();
      expect(now("url-change") - was("url-change")).toBe(16);
      expect(now("unknown-worker") - was("unknown-worker")).toBe(1);
    });
  });

  it("cannot change another worker's row, by its URL or its id", async () => {
    const was = await refusedCounts();
    const byUrl = await heartbeat(rogue, { id: "gpu-rogue", url: HONEST_URL, leaving: true });
    expect(await refusal(byUrl)).toMatchObject({ status: 409, message: expect.stringContaining("another worker") });
    const byId = await heartbeat(rogue, { id: "gpu-honest", url: HONEST_URL, leaving: true });
    expect(await refusal(byId)).toMatchObject({ status: 401, type: "authentication_error" });
    const row = (await members()).find((w) => w.id === "gpu-honest");
    expect(row).toMatchObject({ url: HONEST_URL, state: "up", sequencesTotal: 4 });
    await vi.waitFor(async () => {
      const now = await refusedCounts();
      expect(now("url-taken") - was("url-taken")).toBe(1);
      expect(now("bad-token") - was("bad-token")).toBe(1);
    });
  });

  it("cannot take over the static worker; only the credential bound to exactly its URL heartbeats for it", async () => {
    const was = await refusedCounts();
    expect((await heartbeat(staticOwner, { id: "gpu-static", url: STATIC_URL })).status).toBe(200);
    const dev = await heartbeat(DEV_POOL_TOKEN, { id: "w-dev", url: STATIC_URL, leaving: true });
    expect(await refusal(dev)).toMatchObject({ status: 403, type: "permission_error" });
    const honestThere = await heartbeat(honest, { id: "gpu-honest", url: STATIC_URL });
    expect((await refusal(honestThere)).status).toBe(403);
    const rogueThere = await heartbeat(rogue, { id: "gpu-rogue", url: STATIC_URL, leaving: true });
    expect(await refusal(rogueThere)).toMatchObject({ status: 403, message: expect.stringContaining("static") });
    expect((await members()).find((w) => w.url === STATIC_URL)).toMatchObject({
      id: "gpu-static",
      static: true,
      state: "up",
    });
    await vi.waitFor(async () => {
      const now = await refusedCounts();
      expect(now("static-worker") - was("static-worker")).toBe(2);
      expect(now("url-not-bound") - was("url-not-bound")).toBe(1);
    });
  });

  it("refuses a claim over the capacity ceiling; placement counts the ceiling, not the claim", async () => {
    const was = await refusedCounts();
    const huge = await heartbeat(rogue, {
      id: "gpu-rogue",
      url: ROGUE_URL,
      sequences_total: 1_000_000,
      sequences_free: 1_000_000,
    });
    expect(await refusal(huge)).toMatchObject({ status: 403, message: expect.stringContaining("ceiling is 4") });
    const honestRow = await heartbeat(honest, {
      id: "gpu-honest",
      url: HONEST_URL,
      sequences_total: 8,
      sequences_free: 8,
    });
    expect(honestRow.status).toBe(200);
    const view = await members();
    expect(view.find((w) => w.id === "gpu-rogue")).toMatchObject({ sequencesTotal: 4, capacityCeiling: 4 });
    // Twelve new sessions by load over honest (8), rogue (4) and the static member (8): the rogue gets its share.
    const pool = env.POOLS.getByName("pool:local");
    const placed: string[] = [];
    for (let i = 0; i < 12; i++) placed.push((await pool.place(ARGS))?.worker.id ?? "none");
    expect(placed.filter((id) => id === "gpu-rogue").length).toBeLessThanOrEqual(3);
    expect(placed.filter((id) => id === "gpu-honest").length).toBeGreaterThanOrEqual(4);
    await vi.waitFor(async () => {
      const now = await refusedCounts();
      expect(now("capacity-over-ceiling") - was("capacity-over-ceiling")).toBe(1);
    });
  });

  it("revokes an issued credential: no placement, no heartbeat; env credentials are read-only", async () => {
    expect((await call("/admin/worker-credentials/gpu-rogue", { method: "DELETE", key: null })).status).toBe(401);
    const revoked = await admin("/admin/worker-credentials/gpu-rogue", "DELETE");
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({ id: "gpu-rogue", revoked: true });
    expect((await members()).find((w) => w.id === "gpu-rogue")?.state).toBe("down");
    const pool = env.POOLS.getByName("pool:local");
    for (let i = 0; i < 6; i++) expect((await pool.place(ARGS))?.worker.id).not.toBe("gpu-rogue");
    const was = await refusedCounts();
    const beat = await heartbeat(rogue, { id: "gpu-rogue", url: ROGUE_URL });
    expect(await refusal(beat)).toMatchObject({ status: 401, message: expect.stringContaining("revoked") });
    expect((await members()).find((w) => w.id === "gpu-rogue")?.state).toBe("down");
    await vi.waitFor(async () => {
      expect((await refusedCounts())("revoked") - was("revoked")).toBe(1);
    });
    expect((await admin("/admin/worker-credentials/gpu-rogue", "DELETE")).status).toBe(404);
    const envOne = await admin("/admin/worker-credentials/worker-bound", "DELETE");
    expect(await refusal(envOne)).toMatchObject({
      status: 409,
      message: expect.stringContaining("POOL_WORKER_TOKENS"),
    });
    const listed = (await (await admin("/admin/worker-credentials")).json()) as {
      credentials: { id: string; revoked_at?: number | null }[];
    };
    expect(listed.credentials.find((c) => c.id === "gpu-rogue")?.revoked_at).toEqual(expect.any(Number));
    // Re-issued, the id gets a new token; the old one stays refused.
    const fresh = await issue("gpu-rogue", ROGUE_URL, 4);
    expect((await heartbeat(rogue, { id: "gpu-rogue", url: ROGUE_URL })).status).toBe(401);
    expect((await heartbeat(fresh, { id: "gpu-rogue", url: ROGUE_URL, boot: "boot2" })).status).toBe(200);
  });

  // H4 as reported, with a credential of the older form (POOL_WORKER_TOKENS: id → digest, no binding):
  // on main it registered 16 rows, took the static member over and drew placements with a huge claim.
  it("an older-form credential (digest only) still gets one row, no static worker and the default ceiling", async () => {
    const token = "token-of-worker-bound";
    expect((await heartbeat(token, { id: "worker-bound", url: "http://10.0.8.1:1" })).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 2; i <= 17; i++) {
      statuses.push((await heartbeat(token, { id: "worker-bound", url: `http://10.0.8.${i}:1` })).status);
    }
    expect(statuses).toEqual(Array(16).fill(409));
    expect((await heartbeat(token, { id: "worker-bound", url: STATIC_URL, leaving: true })).status).toBe(403);
    const huge = await heartbeat(token, { id: "worker-bound", url: "http://10.0.8.1:1", sequences_total: 1_000_000 });
    expect(await refusal(huge)).toMatchObject({ status: 403, message: expect.stringContaining("ceiling is 64") });
    const view = await members();
    expect(view.filter((w) => w.id === "worker-bound").map((w) => [w.url, w.state, w.sequencesTotal])).toEqual([
      ["http://10.0.8.1:1", "up", 4],
    ]);
    expect(view.filter((w) => w.url.startsWith("http://10.0.8."))).toHaveLength(1);
    expect(view.find((w) => w.url === STATIC_URL)).toMatchObject({ id: "gpu-static", static: true, state: "up" });
  });
});
