/**
 * Revocation is immediate everywhere (issue 44 item 2): a revoked, expired or archived key is refused
 * by its very next request on every route (models, stored responses, count_tokens, messages,
 * responses, chat) and on the next turn of a WebSocket opened before; a rotated key's old secret works
 * beside the new one until the grace period ends, then only the new one does. Time moves by the
 * authority's clock (core/clock.ts), never by sleeping.
 */
import { waitForGlobalWaitUntil } from "cloudflare:test-internal";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../edge/core/clock.ts";
import type { FakeWorker } from "./fake-worker.ts";
import { call, messagesBody } from "./helpers.ts";
import { admin, type KeyBody, newKey, newTenant, wordWorker } from "./tenancy-helpers.ts";

let fake: FakeWorker | undefined;
const realNow = clock.now;
afterEach(() => {
  fake?.restore();
  clock.now = realNow;
});

/** Every route a key opens, each as one request: its status. */
async function everyRoute(key: string, storedId: string): Promise<Record<string, number>> {
  const bearer = { key, bearer: true };
  const statuses: Record<string, number> = {};
  const routes: [string, () => Promise<Response>][] = [
    ["models", () => call("/v1/models", bearer)],
    ["model", () => call("/v1/models/frontier-test", bearer)],
    ["stored response", () => call(`/v1/responses/${storedId}`, bearer)],
    ["count_tokens", () => call("/v1/messages/count_tokens", { key, method: "POST", body: messagesBody() })],
    ["messages", () => call("/v1/messages", { key, method: "POST", body: messagesBody() })],
    [
      "responses",
      () =>
        call("/v1/responses", {
          ...bearer,
          method: "POST",
          body: { model: "frontier-test", input: "hi", store: false },
        }),
    ],
    [
      "chat",
      () =>
        call("/v1/chat/completions", {
          ...bearer,
          method: "POST",
          body: { model: "frontier-test", messages: [{ role: "user", content: "hi" }] },
        }),
    ],
  ];
  for (const [name, request] of routes) {
    const response = await request();
    await response.arrayBuffer();
    statuses[name] = response.status;
  }
  return statuses;
}

/** A stored response of `key`'s tenant (its id opens GET /v1/responses/{id}). */
async function storedResponse(key: string): Promise<string> {
  const response = await call("/v1/responses", {
    key,
    bearer: true,
    method: "POST",
    body: { model: "frontier-test", input: "keep" },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

const ALL_OK = {
  models: 200,
  model: 200,
  "stored response": 200,
  count_tokens: 200,
  messages: 200,
  responses: 200,
  chat: 200,
};
const ALL_REFUSED = {
  models: 401,
  model: 401,
  "stored response": 401,
  count_tokens: 401,
  messages: 401,
  responses: 401,
  chat: 401,
};

describe("revocation", () => {
  it("refuses a revoked key on its very next request, on every route", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const key = await newKey(tenant);
    const stored = await storedResponse(key.value);
    expect(await everyRoute(key.value, stored)).toEqual(ALL_OK);
    const started = performance.now();
    expect((await admin(`/admin/tenants/${tenant}/keys/${key.id}`, { method: "DELETE" })).status).toBe(200);
    const refused = await call("/v1/messages", { key: key.value, method: "POST", body: messagesBody() });
    const ms = performance.now() - started;
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/revoked/);
    console.log(`revocation: revoke answered and the next request refused within ${ms.toFixed(1)} ms`);
    expect(await everyRoute(key.value, stored)).toEqual(ALL_REFUSED);
    // Another key of the tenant is untouched.
    const other = await newKey(tenant);
    expect((await call("/v1/messages", { key: other.value, method: "POST", body: messagesBody() })).status).toBe(200);
  });

  it("refuses an expired key from the moment it expires, and an inactive one until it is active again", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const now = Date.now();
    clock.now = () => now;
    const key = await newKey(tenant, { expires_at: new Date(now + 60_000).toISOString() });
    const stored = await storedResponse(key.value);
    expect(await everyRoute(key.value, stored)).toEqual(ALL_OK);
    clock.now = () => now + 59_999;
    expect((await call("/v1/models", { key: key.value })).status).toBe(200);
    clock.now = () => now + 60_000;
    expect(await everyRoute(key.value, stored)).toEqual(ALL_REFUSED);
    expect((await admin<KeyBody>(`/admin/tenants/${tenant}/keys/${key.id}`)).body.status).toBe("expired");

    const paused = await newKey(tenant);
    await admin(`/admin/tenants/${tenant}/keys/${paused.id}`, { method: "POST", body: { status: "inactive" } });
    expect(await everyRoute(paused.value, stored)).toEqual(ALL_REFUSED);
    await admin(`/admin/tenants/${tenant}/keys/${paused.id}`, { method: "POST", body: { status: "active" } });
    expect(await everyRoute(paused.value, stored)).toEqual(ALL_OK);
  });

  it("refuses every key of an archived tenant on its next request", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const [a, b] = [await newKey(tenant), await newKey(tenant)];
    const stored = await storedResponse(a.value);
    expect(await everyRoute(b.value, stored)).toEqual(ALL_OK);
    expect((await admin(`/admin/tenants/${tenant}/archive`, { method: "POST" })).status).toBe(200);
    expect(await everyRoute(a.value, stored)).toEqual(ALL_REFUSED);
    expect(await everyRoute(b.value, stored)).toEqual(ALL_REFUSED);
    expect((await admin(`/admin/tenants/${tenant}/keys`, { method: "POST", body: { name: "late" } })).status).toBe(409);
  });

  it("refuses the next turn of a WebSocket opened before the key was revoked", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const key = await newKey(tenant);
    const response = await exports.default.fetch(
      new Request("http://edge.test/v1/responses", {
        headers: { upgrade: "websocket", authorization: `Bearer ${key.value}` },
      }),
    );
    expect(response.status).toBe(101);
    const socket = response.webSocket;
    if (!socket) throw new Error("no socket");
    socket.accept();
    const events: { type: string; status?: number; error?: { message: string } }[] = [];
    let wake: () => void = () => undefined;
    socket.addEventListener("message", (m) => {
      events.push(JSON.parse(m.data as string));
      wake();
    });
    const terminal = async (count: number) => {
      const done = () => events.filter((e) => e.type === "response.completed" || e.type === "error").length >= count;
      while (!done()) await new Promise<void>((resolve) => (wake = resolve));
    };
    const turn = { type: "response.create", model: "frontier-test", store: false, input: "hi" };
    socket.send(JSON.stringify(turn));
    await terminal(1);
    expect(events.at(-1)?.type).toBe("response.completed");
    await admin(`/admin/tenants/${tenant}/keys/${key.id}`, { method: "DELETE" });
    socket.send(JSON.stringify(turn));
    await terminal(2);
    expect(events.at(-1)).toMatchObject({
      type: "error",
      status: 401,
      error: { message: "This API key has been revoked" },
    });
    expect(fake.requests).toHaveLength(1);
    socket.close();
  });
});

describe("rotation", () => {
  it("keeps the old secret working beside the new one until the grace ends, then only the new one", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const now = Date.now();
    clock.now = () => now;
    const old = await newKey(tenant);
    const rotated = await admin<KeyBody>(`/admin/tenants/${tenant}/keys/${old.id}/rotate`, {
      method: "POST",
      body: { grace_seconds: 600 },
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.value ?? "";
    expect(rotated.body.id).toBe(old.id);
    expect(fresh).not.toBe(old.value);
    expect(rotated.body.previous_secret_valid_until).toBe(new Date(now + 600_000).toISOString());
    const use = async (value: string) =>
      (await call("/v1/messages", { key: value, method: "POST", body: messagesBody() })).status;
    expect([await use(old.value), await use(fresh)]).toEqual([200, 200]);
    clock.now = () => now + 599_999;
    expect([await use(old.value), await use(fresh)]).toEqual([200, 200]);
    clock.now = () => now + 600_000;
    expect([await use(old.value), await use(fresh)]).toEqual([401, 200]);
    // Usage of both secrets is one key's: the key id is stable.
    await waitForGlobalWaitUntil(); // the turns' settlements
    const usage = await env.TENANTS.getByName(tenant).usageReport({});
    expect(usage.keys.map((k) => k.keyId)).toEqual([old.id]);

    // Without grace the old secret stops at once.
    const again = await admin<KeyBody>(`/admin/tenants/${tenant}/keys/${old.id}/rotate`, {
      method: "POST",
      body: { grace_seconds: 0 },
    });
    expect([await use(fresh), await use(again.body.value ?? "")]).toEqual([401, 200]);
  });
});
