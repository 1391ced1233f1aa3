/**
 * The per-tenant quota on stored Responses records (issue 30 item 5): an input larger than the
 * per-record limit gets 413 in OpenAI's shape naming `input`; a tenant holding its quota (across
 * all its sessions) gets 429 storage_quota_exceeded, not retried, with retry-after; `store: false`
 * is still served; deleting records gives the space back; another tenant is not affected; refusals
 * are counted in /admin/metrics.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import worker from "../../edge/index.ts";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { parsePromText } from "../support/prom-text.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, LOCAL_KEY, OTHER_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
/** "other" may store about 4 KiB of records, each input at most about 1 KiB. */
const QUOTA_ENV = {
  ...env,
  TENANT_LIMITS: JSON.stringify({ other: { response_store_mb: 0.004, response_input_mb: 0.001 } }),
};

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

function answering() {
  return installFakeWorker(async function* ({ request }) {
    const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
    yield event({ case: "prompt", value: { promptTokens: 30, messageId, decision: CacheDecision.COLD } });
    yield event({ case: "textDelta", value: { text: "ok" } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage: { inputTokens: 30, outputTokens: 1 } } });
  });
}

/** POST /v1/responses through the edge configured with QUOTA_ENV; waits for its after-response work. */
async function respond(key: string, input: string, store = true): Promise<Response> {
  const request = new Request("http://edge.test/v1/responses", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "frontier-test", input, store }),
  });
  const ctx = createExecutionContext();
  type Fetch = Parameters<typeof worker.fetch>;
  const response = await worker.fetch(request as Fetch[0], QUOTA_ENV as unknown as Fetch[1], ctx);
  const body = await response.text();
  await waitOnExecutionContext(ctx);
  return new Response(body, { status: response.status, headers: response.headers });
}

interface OpenAiError {
  error: { type: string; code: string | null; param: string | null; message: string };
}

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const response = await call("/admin/metrics", { key: ADMIN_TOKEN, bearer: true });
  const samples = parsePromText(await response.text());
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

const refusals = (reason: string) => metric("frontier:edge_response_store_refusals_total", { tenant: "other", reason });

describe("per-tenant quota on stored responses", () => {
  it("a stored input over the per-record limit gets 413 naming input; store: false is served", async () => {
    fake = answering();
    const big = "x".repeat(2000);
    const refused = await respond(OTHER_KEY, big);
    expect(refused.status).toBe(413);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    const body = (await refused.json()) as OpenAiError;
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "request_too_large", param: "input" });
    expect(body.error.message).toMatch(/store: false/);
    expect(fake.requests).toHaveLength(0);
    expect((await respond(OTHER_KEY, big, false)).status).toBe(200);
    // Another tenant (default limits) stores the same input.
    expect((await respond(LOCAL_KEY, big)).status).toBe(200);
    expect(await refusals("record-too-large")).toBeGreaterThanOrEqual(1);
  });

  it("counts the per-record limit in UTF-8 bytes, as the sealed record stores them", async () => {
    fake = answering();
    // 700 characters, 1400 bytes: over the ~1 KiB limit only when counted in bytes.
    const refused = await respond(OTHER_KEY, "é".repeat(700));
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as OpenAiError).error.message).toMatch(/14\d\d bytes/);
  });

  it("a tenant holding its quota gets 429 across sessions; another tenant and store: false are served; a delete frees space", async () => {
    fake = answering();
    const stored: string[] = [];
    let refused: Response | undefined;
    // Each turn is a new session (no previous_response_id, no hint): the quota adds them up.
    for (let i = 0; i < 20 && !refused; i++) {
      const response = await respond(OTHER_KEY, `${i} ${"y".repeat(900)}`);
      if (response.status === 200) stored.push(((await response.json()) as { id: string }).id);
      else refused = response;
    }
    expect(refused?.status).toBe(429);
    expect(stored.length).toBeGreaterThanOrEqual(2);
    expect(stored.length).toBeLessThan(6);
    expect(refused?.headers.get("x-should-retry")).toBe("false");
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(3600);
    const body = (await refused?.json()) as OpenAiError;
    expect(body.error).toMatchObject({ type: "rate_limit_exceeded", code: "storage_quota_exceeded", param: "store" });
    expect(body.error.message).toMatch(/quota/);
    // The records stored before the quota was reached are all still there.
    for (const id of stored) {
      expect((await call(`/v1/responses/${id}`, { key: OTHER_KEY, bearer: true })).status).toBe(200);
    }
    expect((await respond(OTHER_KEY, "short", false)).status).toBe(200);
    expect((await respond(LOCAL_KEY, "y".repeat(900))).status).toBe(200);
    expect(await refusals("over-quota")).toBeGreaterThanOrEqual(1);
    // What the tenant holds is a gauge: at least its quota (about 4 KiB), in the records stored.
    expect(await metric("frontier:tenant_response_store_bytes", { tenant: "other" })).toBeGreaterThanOrEqual(4194);
    expect(await metric("frontier:tenant_response_store_records", { tenant: "other" })).toBe(stored.length);
    // Deleting stored records gives their space back.
    for (const id of stored.slice(0, 2)) {
      expect((await call(`/v1/responses/${id}`, { method: "DELETE", key: OTHER_KEY, bearer: true })).status).toBe(200);
    }
    expect((await respond(OTHER_KEY, "after the delete")).status).toBe(200);
  });
});
