/**
 * Tenants and keys at run time (issue 44 item 1): the admin API creates, lists (cursor pages), reads,
 * updates and archives tenants, and issues keys whose secret is shown once and stored nowhere but as
 * a keyed digest; API_KEYS's keys are listed read-only and answer 409 to any change.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { sha256Hex } from "../../edge/tenancy/auth.ts";
import { parseApiKey } from "../../edge/tenancy/keys/key-format.ts";
import type { FakeWorker } from "./fake-worker.ts";
import { call, messagesBody } from "./helpers.ts";
import { admin, type KeyBody, newKey, newTenant, wordWorker } from "./tenancy-helpers.ts";

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

interface ListBody<T> {
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

describe("tenants at run time", () => {
  it("creates, reads, updates, lists in pages and archives a tenant", async () => {
    const created = await admin("/admin/tenants", {
      method: "POST",
      body: {
        id: "acme",
        name: "Acme",
        limits: { requests_per_minute: 60 },
        budget: { amount: 12.5, period: "month" },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: "acme",
      type: "tenant",
      name: "Acme",
      status: "active",
      source: "runtime",
      limits: { requests_per_minute: 60, tokens_per_minute: null, concurrent_requests: null },
      budget: { amount: 12.5, period: "month" },
      models: null,
    });
    expect((await admin("/admin/tenants", { method: "POST", body: { id: "acme", name: "Again" } })).status).toBe(409);
    expect((await admin("/admin/tenants", { method: "POST", body: { id: "Bad Id", name: "x" } })).status).toBe(400);
    const updated = await admin("/admin/tenants/acme", {
      method: "POST",
      body: { name: "Acme Inc", models: ["frontier-test"] },
    });
    expect(updated.body).toMatchObject({ name: "Acme Inc", models: ["frontier-test"], budget: { amount: 12.5 } });
    expect((await admin("/admin/tenants/acme")).body).toMatchObject({ name: "Acme Inc", models: ["frontier-test"] });

    // Pages: API_KEYS's tenants are listed too (source env), then the created ones in order.
    for (const id of ["p1", "p2", "p3"]) await admin("/admin/tenants", { method: "POST", body: { id, name: id } });
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: { body: ListBody<{ id: string; source: string }> } = await admin(
        `/admin/tenants?limit=2${after ? `&after_id=${after}` : ""}`,
      );
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((t) => t.id));
      if (!page.body.has_more) break;
      after = page.body.last_id;
    }
    expect(seen).toEqual(expect.arrayContaining(["local", "other", "acme", "p1", "p2", "p3"]));
    expect(seen.indexOf("p1")).toBeLessThan(seen.indexOf("p3"));
    const back = await admin<ListBody<{ id: string }>>("/admin/tenants?limit=2&before_id=p3");
    expect(back.body.data.map((t) => t.id)).toEqual(["p1", "p2"]);
    expect(back.body.has_more).toBe(true);

    const archived = await admin("/admin/tenants/p2/archive", { method: "POST" });
    expect(archived.body).toMatchObject({ id: "p2", status: "archived" });
    const active = await admin<ListBody<{ id: string }>>("/admin/tenants?limit=100");
    expect(active.body.data.map((t) => t.id)).not.toContain("p2");
    const all = await admin<ListBody<{ id: string }>>("/admin/tenants?limit=100&include_archived=true");
    expect(all.body.data.map((t) => t.id)).toContain("p2");
    // API_KEYS's tenants cannot be archived (their keys live in the env).
    expect((await admin("/admin/tenants/local/archive", { method: "POST" })).status).toBe(409);
    expect((await admin("/admin/tenants/nobody")).status).toBe(404);
  });
});

describe("keys at run time", () => {
  it("shows a key's secret once, and the tenant's storage holds neither it nor an unkeyed hash of it", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const issued = await admin<KeyBody>(`/admin/tenants/${tenant}/keys`, { method: "POST", body: { name: "ci" } });
    expect(issued.status).toBe(201);
    const value = issued.body.value ?? "";
    expect(value.startsWith(`sk-fr-${tenant}-${issued.body.id}-`)).toBe(true);
    expect(issued.body).toMatchObject({
      type: "api_key",
      tenant_id: tenant,
      name: "ci",
      status: "active",
      source: "runtime",
    });
    expect(String(issued.body.partial_key_hint)).toMatch(
      new RegExp(`^sk-fr-${tenant}-${issued.body.id}-…[a-z2-7]{4}$`),
    );
    // It works at once, and nothing shows the secret again.
    const used = await call("/v1/messages", { method: "POST", key: value, body: messagesBody() });
    expect(used.status).toBe(200);
    const read = await admin(`/admin/tenants/${tenant}/keys/${issued.body.id}`);
    const listed = await admin(`/admin/tenants/${tenant}/keys`);
    for (const text of [JSON.stringify(read.body), JSON.stringify(listed.body)])
      expect(text).not.toContain(value.slice(-40));

    // Dump every value of every table of the tenant's authority (and of the registry).
    const secret = parseApiKey(value)?.secret ?? "";
    const forbidden = [value, secret, await sha256Hex(value), await sha256Hex(secret)];
    for (const stub of [env.TENANTS.getByName(tenant), env.REGISTRY.getByName("global")]) {
      const dump = await runInDurableObject(stub, (_instance, state) => {
        const tables = state.storage.sql
          .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf%'")
          .toArray();
        return tables
          .map((t) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${t.name}"`).toArray()))
          .join("\n");
      });
      expect(dump.length).toBeGreaterThan(0);
      for (const needle of forbidden) expect(dump).not.toContain(needle);
    }
  });

  it("lists API_KEYS's keys read-only first, then issued keys in pages; changes to env keys are 409", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await newKey("local", { name: `k${i}` })).id);
    const seen: KeyBody[] = [];
    let after: string | null = null;
    for (;;) {
      const page: { body: ListBody<KeyBody> } = await admin(
        `/admin/tenants/local/keys?limit=2${after ? `&after_id=${after}` : ""}`,
      );
      seen.push(...page.body.data);
      if (!page.body.has_more) break;
      after = page.body.last_id;
    }
    const envKey = (await sha256Hex("sk-frontier-local")).slice(0, 16);
    expect(seen[0]).toMatchObject({ id: envKey, source: "env", read_only: true });
    expect(seen.slice(1).map((k) => k.id)).toEqual(expect.arrayContaining(ids));
    expect(seen.every((k) => k.value === undefined)).toBe(true);
    for (const change of [
      { method: "POST", path: `/admin/tenants/local/keys/${envKey}`, body: { name: "x" } },
      { method: "DELETE", path: `/admin/tenants/local/keys/${envKey}` },
      { method: "POST", path: `/admin/tenants/local/keys/${envKey}/rotate`, body: {} },
    ]) {
      expect((await admin(change.path, change)).status).toBe(409);
    }
    // Updates: name, status, limits; a revoked key cannot change again.
    const [first] = ids;
    const updated = await admin<KeyBody>(`/admin/tenants/local/keys/${first}`, {
      method: "POST",
      body: { name: "renamed", status: "inactive", limits: { tokens_per_minute: 1000 } },
    });
    expect(updated.body).toMatchObject({ name: "renamed", status: "inactive", limits: { tokens_per_minute: 1000 } });
    expect((await admin<KeyBody>(`/admin/tenants/local/keys/${first}`, { method: "DELETE" })).body.status).toBe(
      "revoked",
    );
    expect(
      (await admin(`/admin/tenants/local/keys/${first}`, { method: "POST", body: { name: "again" } })).status,
    ).toBe(409);
    expect((await admin(`/admin/tenants/local/keys/nope`)).status).toBe(404);
  });
});
