/**
 * A worker drains itself with its own pool credential (`POST /internal/pool/drain`, issue 30 item
 * 2): no worker needs the admin token to be drained on shutdown. A credential drains only the row
 * keyed by its own id: naming another worker's id (run-time or env credential), an unknown id, the
 * static worker or a region it has no row in is refused before anything is drained, and the Drain
 * RPC goes to the credential's own worker only. The fake worker answers the Drain RPC.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call } from "./helpers.ts";

const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
const STATIC_URL = "http://127.0.0.1:1";
const A_URL = "http://127.0.9.1:1";
const B_URL = "http://127.0.9.2:1";
const BOUND_URL = "http://127.0.9.3:1";
/** POOL_WORKER_TOKENS in vitest.workerd.config.ts: worker-bound's token. */
const BOUND_TOKEN = "token-of-worker-bound";
const ARGS = { region: "local", staticUrls: [STATIC_URL], timeoutMs: 60_000 };

async function issue(id: string, url: string): Promise<string> {
  const response = await call("/admin/worker-credentials", {
    method: "POST",
    key: ADMIN_TOKEN,
    bearer: true,
    body: { id, url, capacity: 4 },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { token: string }).token;
}

async function heartbeat(token: string, id: string, url: string): Promise<void> {
  const response = await call("/internal/pool/heartbeat", {
    method: "POST",
    key: null,
    headers: { authorization: `Bearer ${token}` },
    body: {
      id,
      url,
      region: "local",
      boot: "boot1",
      model_identity: "m",
      sequences_total: 4,
      sequences_free: 4,
      prefixes: [],
    },
  });
  expect(response.status).toBe(200);
}

function selfDrain(token: string | null, body: unknown): Promise<Response> {
  return call("/internal/pool/drain", {
    method: "POST",
    key: null,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    body,
  });
}

const stateOf = async (id: string) =>
  (await env.POOLS.getByName("pool:local").view(ARGS)).find((w) => w.id === id)?.state;

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

describe("a worker's self-drain with its own pool credential", () => {
  it("drains only its own row; another worker's id, an unknown id or the static worker is refused", async () => {
    const tokenA = await issue("gpu-a", A_URL);
    const tokenB = await issue("gpu-b", B_URL);
    await heartbeat(tokenA, "gpu-a", A_URL);
    await heartbeat(tokenB, "gpu-b", B_URL);
    const drained: string[] = [];
    fake = installFakeWorker(() => [], {
      urls: [A_URL, B_URL, STATIC_URL],
      drain: (url) => {
        drained.push(url);
        return { sessions: [], residentSessions: 0 };
      },
    });

    for (const id of ["gpu-b", "worker-bound", "no-such-worker", "http://127.0.0.1:1"]) {
      const refused = await selfDrain(tokenA, { id, region: "local" });
      expect([401, 400], id).toContain(refused.status);
    }
    expect((await selfDrain(tokenA, { id: "gpu-b", region: "local" })).status).toBe(401);
    expect(drained).toEqual([]);
    expect(await stateOf("gpu-b")).toBe("up");

    const own = await selfDrain(tokenA, { id: "gpu-a", region: "local" });
    expect(own.status).toBe(200);
    const report = (await own.json()) as { state: string; worker: { id: string; url: string } };
    expect(report).toMatchObject({ state: "drained", worker: { id: "gpu-a", url: A_URL } });
    expect(drained).toEqual([A_URL]);
    expect(await stateOf("gpu-a")).toBe("drained");
    expect(await stateOf("gpu-b")).toBe("up");
  });

  it("an env credential (POOL_WORKER_TOKENS) drains its own row, and not a run-time worker's", async () => {
    const tokenC = await issue("gpu-c", "http://127.0.9.4:1");
    await heartbeat(tokenC, "gpu-c", "http://127.0.9.4:1");
    await heartbeat(BOUND_TOKEN, "worker-bound", BOUND_URL);
    const drained: string[] = [];
    fake = installFakeWorker(() => [], {
      urls: [BOUND_URL, "http://127.0.9.4:1"],
      drain: (url) => {
        drained.push(url);
        return {};
      },
    });
    expect((await selfDrain(BOUND_TOKEN, { id: "gpu-c", region: "local" })).status).toBe(401);
    expect(drained).toEqual([]);
    expect((await selfDrain(BOUND_TOKEN, { id: "worker-bound", region: "local" })).status).toBe(200);
    expect(drained).toEqual([BOUND_URL]);
    expect(await stateOf("gpu-c")).toBe("up");
  });

  it("refuses no token, a revoked credential, a bad body and a region without the row, in the error shape", async () => {
    const token = await issue("gpu-d", "http://127.0.9.5:1");
    const noToken = await selfDrain(null, { id: "gpu-d", region: "local" });
    expect(noToken.status).toBe(401);
    expect(((await noToken.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
    const badBody = await selfDrain(token, { id: "gpu d", region: "local" });
    expect(badBody.status).toBe(400);
    expect(((await badBody.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    expect((await selfDrain(token, { id: "gpu-d", region: "nowhere" })).status).toBe(400);
    // Never heartbeated: there is no row of its own to drain.
    expect((await selfDrain(token, { id: "gpu-d", region: "local" })).status).toBe(404);
    const revoked = await call("/admin/worker-credentials/gpu-d", { method: "DELETE", key: ADMIN_TOKEN, bearer: true });
    expect(revoked.status).toBe(200);
    expect((await selfDrain(token, { id: "gpu-d", region: "local" })).status).toBe(401);
  });
});
