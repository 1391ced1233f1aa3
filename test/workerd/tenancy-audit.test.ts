/**
 * The audit trail (issue 44 item 5): every admin change — tenant, key, limits, prices, admin keys,
 * worker credentials — is recorded with its actor, time, request id, source address and a diff, never
 * a secret; `GET /admin/audit` filters and pages it; the records are hash-chained, and
 * `GET /admin/audit/verify` finds a row edited, or deleted, in the registry's storage.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "./helpers.ts";
import { admin, type KeyBody, ROOT_TOKEN } from "./tenancy-helpers.ts";

interface AuditEvent {
  id: string;
  action: string;
  at: string;
  actor: { type: string; id?: string };
  request_id: string;
  source: string | null;
  tenant_id: string | null;
  target: { type: string; id: string };
  diff: { before: unknown; after: unknown };
  hash: string;
  prev_hash: string;
}

interface AuditPage {
  data: AuditEvent[];
  has_more: boolean;
  last_id: string | null;
}

/** An admin change from a known address: its answer and its request id. */
async function change(path: string, method: string, body?: unknown) {
  const response = await call(path, {
    method,
    key: ROOT_TOKEN,
    bearer: true,
    headers: { "cf-connecting-ip": "127.0.0.9" },
    ...(body !== undefined && { body }),
  });
  const text = await response.text();
  expect(response.status, text).toBeLessThan(300);
  return { body: JSON.parse(text) as Record<string, unknown>, requestId: response.headers.get("request-id") ?? "" };
}

describe("the audit trail", () => {
  it("records every kind of admin change with actor, request id, source and diff, and no secret", async () => {
    const tenant = await change("/admin/tenants", "POST", {
      id: "audited",
      name: "Audited",
      budget: { amount: 5, period: "week" },
    });
    const key = await change("/admin/tenants/audited/keys", "POST", {
      name: "ci",
      limits: { requests_per_minute: 10 },
    });
    const keyId = String(key.body.id);
    await change(`/admin/tenants/audited/keys/${keyId}`, "POST", { limits: { requests_per_minute: 20 } });
    const rotated = await change(`/admin/tenants/audited/keys/${keyId}/rotate`, "POST", { grace_seconds: 60 });
    await change(`/admin/tenants/audited/keys/${keyId}`, "DELETE");
    await change("/admin/tenants/audited", "POST", { limits: { tokens_per_minute: 5000 } });
    await change("/admin/prices", "POST", { prices: [{ model: "frontier-test", input: 1, output: 2 }] });
    const adminKey = await change("/admin/admin-keys", "POST", { name: "ops", scopes: ["read"] });
    await change(`/admin/admin-keys/${String(adminKey.body.id)}`, "DELETE");
    const credential = await change("/admin/worker-credentials", "POST", {
      id: "w-audit",
      url: "http://10.0.7.1:50061",
    });
    await change("/admin/worker-credentials/w-audit", "DELETE");
    await change("/admin/tenants/audited/archive", "POST");

    const page = await admin<AuditPage>("/admin/audit?limit=100");
    const actions = page.body.data.map((e) => e.action);
    expect(actions).toEqual([
      "tenant.archived",
      "worker_credential.revoked",
      "worker_credential.issued",
      "admin_key.revoked",
      "admin_key.created",
      "prices.updated",
      "tenant.policy_updated",
      "api_key.revoked",
      "api_key.rotated",
      "api_key.updated",
      "api_key.created",
      "tenant.policy_updated",
      "tenant.created",
    ]);
    const created = page.body.data.at(-1);
    expect(created).toMatchObject({
      actor: { type: "root" },
      request_id: tenant.requestId,
      source: "127.0.0.9",
      tenant_id: "audited",
      target: { type: "tenant", id: "audited" },
      diff: { before: null, after: { id: "audited", name: "Audited" } },
    });
    expect(Date.parse(created?.at ?? "")).toBeGreaterThan(0);
    const updated = page.body.data.find((e) => e.action === "api_key.updated");
    expect(updated).toMatchObject({
      request_id: expect.stringMatching(/^req_/),
      target: { type: "api_key", id: keyId },
      diff: { before: { limits: { requests_per_minute: 10 } }, after: { limits: { requests_per_minute: 20 } } },
    });
    // No secret anywhere: not the keys, the rotated key, the admin key or the worker's token.
    const text = JSON.stringify(page.body);
    for (const secret of [key.body.value, rotated.body.value, adminKey.body.value, credential.body.token]) {
      expect(typeof secret).toBe("string");
      expect(text).not.toContain(String(secret).slice(-24));
    }

    // Filters and pages.
    const keys = await admin<AuditPage>("/admin/audit?tenant_id=audited&action=api_key.updated");
    expect(keys.body.data.map((e) => e.action)).toEqual(["api_key.updated"]);
    const first = await admin<AuditPage>("/admin/audit?limit=5");
    const second = await admin<AuditPage>(`/admin/audit?limit=5&after_id=${first.body.last_id}`);
    expect(first.body.has_more).toBe(true);
    expect([...first.body.data, ...second.body.data].map((e) => e.action)).toEqual(actions.slice(0, 10));
    const since = await admin<AuditPage>(`/admin/audit?since=${encodeURIComponent(created?.at ?? "")}&limit=100`);
    expect(since.body.data.length).toBe(actions.length);
    const later = await admin<AuditPage>("/admin/audit?since=2999-01-01T00:00:00Z");
    expect(later.body.data).toEqual([]);
  });

  it("chains the records: verify passes, then names a row edited or deleted in storage", async () => {
    for (const id of ["chain-a", "chain-b", "chain-c"])
      await admin("/admin/tenants", { method: "POST", body: { id, name: id } });
    const verified = await admin<{ ok: boolean; rows: number; head: { id: string; hash: string }; first_bad: unknown }>(
      "/admin/audit/verify",
    );
    expect(verified.body).toMatchObject({ ok: true, first_bad: null });
    expect(verified.body.rows).toBeGreaterThanOrEqual(3);
    const events = (await admin<AuditPage>("/admin/audit?limit=100")).body.data;
    expect(events[0]?.hash).toBe(verified.body.head.hash);
    for (let i = 0; i + 1 < events.length; i++) expect(events[i]?.prev_hash).toBe(events[i + 1]?.hash);

    const registry = env.REGISTRY.getByName("global");
    const target = events.find((e) => e.target.id === "chain-b");
    const seq = Number(target?.id.replace("audit_", ""));
    // Someone with the storage renames the tenant in its audit record.
    await runInDurableObject(registry, (_instance, state) => {
      state.storage.sql.exec("UPDATE audit SET diff = replace(diff, 'chain-b', 'chain-x') WHERE seq = ?", seq);
    });
    const edited = await admin("/admin/audit/verify");
    expect(edited.body).toMatchObject({ ok: false, first_bad: { id: `audit_${seq}`, reason: "hash" } });
    await runInDurableObject(registry, (_instance, state) => {
      state.storage.sql.exec("UPDATE audit SET diff = replace(diff, 'chain-x', 'chain-b') WHERE seq = ?", seq);
    });
    expect((await admin("/admin/audit/verify")).body).toMatchObject({ ok: true });
    // A row taken out of the middle.
    await runInDurableObject(registry, (_instance, state) => {
      state.storage.sql.exec("DELETE FROM audit WHERE seq = ?", seq);
    });
    expect((await admin("/admin/audit/verify")).body).toMatchObject({
      ok: false,
      first_bad: { id: `audit_${seq + 1}`, reason: "gap" },
    });
  });

  it("needs an admin and never holds a key's value, even one that was rotated", async () => {
    expect((await call("/admin/audit", { key: null })).status).toBe(401);
    const created = await admin<KeyBody>("/admin/tenants/local/keys", { method: "POST", body: { name: "x" } });
    const records = JSON.stringify((await admin("/admin/audit?tenant_id=local")).body);
    expect(records).toContain(created.body.id);
    expect(records).not.toContain(String(created.body.value).slice(-30));
  });
});
