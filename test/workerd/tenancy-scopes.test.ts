/**
 * Scoped admins (issue 44 item 6): admin keys issued by the env admin token (the break-glass root)
 * carry scopes (read, keys, billing, pool) and optionally one tenant. Each route refuses (403) what a
 * key's scopes or tenant do not reach; a tenant's admin manages its own keys within its tenant's caps
 * and sees only its own tenants, keys, usage and audit records; a revoked admin key is refused at
 * once; the cross-site guard applies to admin keys as to the root token.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, messagesBody } from "./helpers.ts";
import { admin, type KeyBody, newTenant, wordWorker } from "./tenancy-helpers.ts";

const keys: Record<string, string> = {};
let tenantA = "";
let tenantB = "";

async function adminKey(name: string, scopes: string[], tenant?: string): Promise<{ id: string; value: string }> {
  const created = await admin<KeyBody>("/admin/admin-keys", {
    method: "POST",
    body: { name, scopes, ...(tenant !== undefined && { tenant_id: tenant }) },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(String(created.body.value)).toMatch(/^sk-fra-[a-z2-7]{12}-[a-z2-7]{68}$/);
  return { id: created.body.id, value: created.body.value ?? "" };
}

/** The status of `method path` for the admin key `who`. */
async function status(who: string, method: string, path: string, body?: unknown): Promise<number> {
  const response = await admin(path, { method, token: keys[who] ?? who, ...(body !== undefined && { body }) });
  return response.status;
}

beforeAll(async () => {
  tenantA = await newTenant({
    limits: { requests_per_minute: 100 },
    budget: { amount: 10, period: "month" },
    models: ["frontier-test"],
  });
  tenantB = await newTenant();
  await admin(`/admin/tenants/${tenantB}/keys`, { method: "POST", body: { name: "b-key" } });
  keys.read = (await adminKey("auditor", ["read"])).value;
  keys.billing = (await adminKey("finance", ["billing"])).value;
  keys.pool = (await adminKey("sre", ["pool"])).value;
  keys.tenantA = (await adminKey("a-admin", ["keys", "read"], tenantA)).value;
});

describe("scoped admin keys", () => {
  it("read: sees everything, changes nothing", async () => {
    expect(await status("read", "GET", "/admin/tenants")).toBe(200);
    expect(await status("read", "GET", `/admin/tenants/${tenantB}/keys`)).toBe(200);
    expect(await status("read", "GET", "/admin/audit")).toBe(200);
    expect(await status("read", "GET", "/admin/metrics")).toBe(200);
    expect(await status("read", "GET", "/admin/usage")).toBe(200);
    expect(await status("read", "POST", "/admin/tenants", { name: "x" })).toBe(403);
    expect(await status("read", "POST", `/admin/tenants/${tenantB}/keys`, { name: "x" })).toBe(403);
    expect(await status("read", "POST", "/admin/prices", { prices: [{ model: "m", input: 1, output: 1 }] })).toBe(403);
    expect(await status("read", "POST", "/admin/workers/nope/drain")).toBe(403);
    expect(await status("read", "GET", "/admin/admin-keys")).toBe(403);
  });

  it("billing: prices and tenants' budgets, no keys; pool: the workers, not the tenants", async () => {
    expect(await status("billing", "POST", "/admin/prices", { prices: [{ model: "m", input: 1, output: 1 }] })).toBe(
      200,
    );
    expect(await status("billing", "POST", `/admin/tenants/${tenantB}`, { budget: { amount: 3, period: "day" } })).toBe(
      200,
    );
    expect(await status("billing", "POST", `/admin/tenants/${tenantB}`, { name: "renamed" })).toBe(403);
    expect(await status("billing", "POST", `/admin/tenants/${tenantB}/keys`, { name: "x" })).toBe(403);
    expect(await status("billing", "GET", "/admin/usage")).toBe(200);
    expect(await status("pool", "GET", "/admin/workers")).toBe(200);
    expect(
      await status("pool", "POST", "/admin/worker-credentials", { id: "w-scoped", url: "http://10.0.8.1:50061" }),
    ).toBe(201);
    expect(await status("pool", "GET", "/admin/tenants")).toBe(403);
    expect(await status("pool", "POST", "/admin/prices", { prices: [{ model: "m", input: 1, output: 1 }] })).toBe(403);
  });

  it("a tenant's admin: its own keys within its tenant's caps, its own data, nothing else", async () => {
    const tenants = await admin<{ data: { id: string }[] }>("/admin/tenants?limit=100", { token: keys.tenantA });
    expect(tenants.body.data.map((t) => t.id)).toEqual([tenantA]);
    expect(await status("tenantA", "GET", `/admin/tenants/${tenantA}`)).toBe(200);
    expect(await status("tenantA", "GET", `/admin/tenants/${tenantB}`)).toBe(403);
    expect(await status("tenantA", "GET", `/admin/tenants/${tenantB}/keys`)).toBe(403);
    expect(await status("tenantA", "POST", `/admin/tenants/${tenantB}/keys`, { name: "x" })).toBe(403);
    // Its keys, within the tenant's caps.
    const own = await admin<KeyBody>(`/admin/tenants/${tenantA}/keys`, {
      method: "POST",
      token: keys.tenantA,
      body: { name: "mine", limits: { requests_per_minute: 50 }, budget: { amount: 2, period: "day" } },
    });
    expect(own.status).toBe(201);
    const over = [
      { name: "x", limits: { requests_per_minute: 500 } },
      { name: "x", budget: { amount: 50, period: "month" } },
      { name: "x", models: ["frontier-large"] },
    ];
    for (const body of over) expect(await status("tenantA", "POST", `/admin/tenants/${tenantA}/keys`, body)).toBe(403);
    expect(
      await status("tenantA", "POST", `/admin/tenants/${tenantA}/keys/${own.body.id}`, {
        limits: { requests_per_minute: 101 },
      }),
    ).toBe(403);
    expect(await status("tenantA", "DELETE", `/admin/tenants/${tenantA}/keys/${own.body.id}`)).toBe(200);
    // Not its tenant's policy, not another tenant, not the deployment.
    expect(
      await status("tenantA", "POST", `/admin/tenants/${tenantA}`, { limits: { requests_per_minute: 1000 } }),
    ).toBe(403);
    expect(await status("tenantA", "POST", `/admin/tenants/${tenantA}/archive`)).toBe(403);
    expect(await status("tenantA", "POST", "/admin/tenants", { name: "x" })).toBe(403);
    for (const path of [
      "/admin/metrics",
      "/admin/workers",
      "/admin/status.json",
      "/admin/admin-keys",
      "/admin/audit/verify",
    ]) {
      expect(await status("tenantA", "GET", path)).toBe(403);
    }
    // Its own usage and audit records only.
    const usage = await admin<{ tenants: { tenant: string }[] }>("/admin/usage", { token: keys.tenantA });
    expect(usage.body.tenants.map((t) => t.tenant)).toEqual([tenantA]);
    expect(await status("tenantA", "GET", `/admin/usage?tenant=${tenantB}`)).toBe(404);
    const audit = await admin<{ data: { tenant_id: string }[] }>("/admin/audit?limit=100", { token: keys.tenantA });
    expect(audit.body.data.length).toBeGreaterThan(0);
    expect(new Set(audit.body.data.map((e) => e.tenant_id))).toEqual(new Set([tenantA]));
    expect(await status("tenantA", "GET", `/admin/audit?tenant_id=${tenantB}`)).toBe(403);
    // Its audit records name it as the actor.
    const created = audit.body.data.find((e) => (e as unknown as { action: string }).action === "api_key.created");
    expect(created).toMatchObject({ actor: { type: "admin_key", name: "a-admin" } });
  });

  it("a key the tenant's admin issued serves turns; a revoked admin key is refused at once", async () => {
    const fake = wordWorker();
    try {
      const issued = await admin<KeyBody>(`/admin/tenants/${tenantA}/keys`, {
        method: "POST",
        token: keys.tenantA,
        body: { name: "svc" },
      });
      expect(
        (await call("/v1/messages", { key: issued.body.value ?? "", method: "POST", body: messagesBody() })).status,
      ).toBe(200);
    } finally {
      fake.restore();
    }
    const temporary = await adminKey("temp", ["read"]);
    expect(await status(temporary.value, "GET", "/admin/tenants")).toBe(200);
    expect((await admin(`/admin/admin-keys/${temporary.id}`, { method: "DELETE" })).status).toBe(200);
    expect(await status(temporary.value, "GET", "/admin/tenants")).toBe(401);
    // Only root manages admin keys.
    expect(await status("read", "POST", "/admin/admin-keys", { name: "x", scopes: ["read"] })).toBe(403);
    expect(await status("tenantA", "DELETE", `/admin/admin-keys/${temporary.id}`)).toBe(403);
    // A tenant's admin key cannot hold the pool scope.
    expect(
      (await admin("/admin/admin-keys", { method: "POST", body: { name: "x", scopes: ["pool"], tenant_id: tenantA } }))
        .status,
    ).toBe(400);
    // A forged admin key (right shape, wrong check) is refused without a registry lookup.
    expect(await status(`sk-fra-${"a".repeat(12)}-${"b".repeat(68)}`, "GET", "/admin/tenants")).toBe(401);
  });

  it("keeps the cross-site guard: a foreign Origin or Basic credentials on a change are refused", async () => {
    const request = (headers: Record<string, string>) =>
      exports.default.fetch(
        new Request(`http://edge.test/admin/tenants/${tenantA}/keys`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ name: "x" }),
        }),
      );
    const foreign = await request({ authorization: `Bearer ${keys.tenantA}`, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const basic = await request({ authorization: `Basic ${btoa(`x:${keys.tenantA}`)}` });
    expect(basic.status).toBe(401);
    // A read takes Basic (the status page in a browser).
    const page = await exports.default.fetch(
      new Request("http://edge.test/admin/tenants", { headers: { authorization: `Basic ${btoa(`x:${keys.read}`)}` } }),
    );
    expect(page.status).toBe(200);
  });
});
