/**
 * A tenant's API keys at run time (docs/operations/tenants.md):
 *   GET    /admin/tenants/:t/keys[?status=…]     list: API_KEYS's (read-only) first, then issued ones
 *   POST   /admin/tenants/:t/keys                issue { name, expires_at?, limits?, budget?, models? }
 *                                                → 201 with `value`, the key, shown this once
 *   GET    /admin/tenants/:t/keys/:id            read
 *   POST   /admin/tenants/:t/keys/:id            update { name?, status?, expires_at?, limits?, budget?, models? }
 *   DELETE /admin/tenants/:t/keys/:id            revoke (kept, as `revoked`, for its usage history)
 *   POST   /admin/tenants/:t/keys/:id/rotate     new secret, same id { grace_seconds? }: both work until
 *                                                the grace ends → 200 with the new `value`
 * Every change is refused its next request in every isolate (the authority is asked on each), and
 * audited. An API_KEYS key answers 409 to any change. A tenant's own admin stays within its tenant's
 * caps (a key's limits no higher, its budget no larger, its models among the tenant's).
 */
import { clock } from "../../core/clock.ts";
import { ApiError } from "../../core/errors.ts";
import { jsonResponse } from "../../http/body.ts";
import { authorityOf } from "../../tenancy/admission.ts";
import type { KeyInfo, KeyPatch } from "../../tenancy/authority/key-store.ts";
import { OPEN_POLICY, type Policy, tenantScopeLimits } from "../../tenancy/authority/policy.ts";
import { issueKey } from "../../tenancy/keys/key-digest.ts";
import { TENANT_ID } from "../../tenancy/keys/key-format.ts";
import { auditDiff } from "../../tenancy/registry/audit-log.ts";
import { registryStub } from "../../tenancy/registry/registry-do.ts";
import { type AdminPrincipal, auditContext, requireAdmin } from "../admin-access.ts";
import type { AdminContext } from "../bindings.ts";
import {
  bodyObject,
  nameField,
  pageRequest,
  policyFields,
  secondsField,
  timeField,
  unknownCursor,
} from "./admin-input.ts";
import { envKeyIds, keyPage } from "./key-pages.ts";
import { envKeyJson, keyJson, policyJson, spendJson, time } from "./render.ts";
import { changedFields, conflict, knownTenant } from "./tenant-routes.ts";

const READ = ["read", "keys", "billing"] as const;
const MAX_GRACE_S = 30 * 86_400;
const DEFAULT_GRACE_S = 3600;

export async function handleListKeys(request: Request, rc: AdminContext, tenant: string): Promise<Response> {
  await requireAdmin(request, rc, { scope: READ, tenant });
  await knownTenant(rc, tenant);
  const url = new URL(request.url);
  const page = await keyPage(rc, tenant, pageRequest(url));
  if (!page) throw unknownCursor();
  return jsonResponse(page);
}

export async function handleCreateKey(request: Request, rc: AdminContext, tenant: string): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "keys", tenant });
  const known = await knownTenant(rc, tenant);
  if (known.archivedAt !== null) throw conflict(`Tenant "${tenant}" is archived`);
  if (!TENANT_ID.test(tenant)) {
    throw ApiError.invalid(
      `Tenant id "${tenant}" cannot be spelled in a key ([a-z0-9_-]); give its customers a new tenant`,
    );
  }
  const body = await bodyObject(request);
  const name = nameField(body);
  const policy = policyFields(body, OPEN_POLICY);
  const authority = authorityOf(rc.env, tenant);
  await withinCaps(rc, admin, authority, policy);
  const issued = await issueKey(rc.config.idSecret, { kind: "api", tenant });
  const created = await authority.createKey({
    id: issued.keyId,
    name,
    digest: issued.digest,
    hint: issued.hint,
    createdBy: admin.actor.type === "root" ? "root" : `admin_key:${admin.actor.id}`,
    expiresAt: expiry(body),
    policy,
  });
  if (!created) throw ApiError.internal("A key id collided; try again");
  const after = { name, expires_at: time(created.expiresAt), ...policyJson(policy) };
  await audit(request, rc, admin, tenant, created.id, "api_key.created", { before: null, after });
  return jsonResponse({ ...keyJson(tenant, created), value: issued.value }, { status: 201 });
}

export async function handleGetKey(request: Request, rc: AdminContext, tenant: string, id: string): Promise<Response> {
  await requireAdmin(request, rc, { scope: READ, tenant });
  await knownTenant(rc, tenant);
  if (envKeyIds(rc, tenant).includes(id)) return jsonResponse(envKeyJson(tenant, id));
  const authority = authorityOf(rc.env, tenant);
  const [key, spend] = await Promise.all([authority.key(id), authority.spend(id)]);
  return jsonResponse({ ...keyJson(tenant, found(key, id)), spend: spendJson(spend.key) });
}

export async function handleUpdateKey(
  request: Request,
  rc: AdminContext,
  tenant: string,
  id: string,
): Promise<Response> {
  const admin = await keyChanger(request, rc, tenant, id);
  const body = await bodyObject(request);
  const authority = authorityOf(rc.env, tenant);
  const before = found(await authority.key(id), id);
  const patch: KeyPatch = { policy: policyFields(body, before.policy) };
  if (body.name !== undefined) patch.name = nameField(body);
  if (body.status !== undefined) {
    if (body.status !== "active" && body.status !== "inactive") {
      throw new ApiError("invalid_request_error", 'status: "active" or "inactive" (DELETE revokes)', {
        param: "status",
      });
    }
    patch.status = body.status;
  }
  if (body.expires_at !== undefined) patch.expiresAt = timeField(body.expires_at, ["expires_at"]);
  await withinCaps(rc, admin, authority, patch.policy ?? before.policy);
  const after = await authority.updateKey(id, patch);
  if (after === "revoked") throw conflict(`Key ${id} is revoked`);
  const updated = found(after, id);
  const diff = changedFields(keyFields(before), keyFields(updated));
  if (diff) await audit(request, rc, admin, tenant, id, "api_key.updated", diff);
  return jsonResponse(keyJson(tenant, updated));
}

export async function handleRevokeKey(
  request: Request,
  rc: AdminContext,
  tenant: string,
  id: string,
): Promise<Response> {
  const admin = await keyChanger(request, rc, tenant, id);
  const revoked = await authorityOf(rc.env, tenant).revokeKey(id);
  if (revoked === "revoked") throw conflict(`Key ${id} is revoked already`);
  const key = found(revoked, id);
  await audit(request, rc, admin, tenant, id, "api_key.revoked", {
    before: { status: "active" },
    after: { status: "revoked" },
  });
  return jsonResponse(keyJson(tenant, key));
}

export async function handleRotateKey(
  request: Request,
  rc: AdminContext,
  tenant: string,
  id: string,
): Promise<Response> {
  const admin = await keyChanger(request, rc, tenant, id);
  const body = await bodyObject(request);
  const grace =
    body.grace_seconds === undefined
      ? DEFAULT_GRACE_S
      : secondsField(body.grace_seconds, ["grace_seconds"], MAX_GRACE_S);
  const authority = authorityOf(rc.env, tenant);
  found(await authority.key(id), id);
  const issued = await issueKey(rc.config.idSecret, { kind: "api", tenant }, id);
  const rotated = await authority.rotateKey(
    id,
    { digest: issued.digest, hint: issued.hint },
    clock.now() + grace * 1000,
  );
  if (rotated === "revoked") throw conflict(`Key ${id} is revoked`);
  const key = found(rotated, id);
  const after = { rotated_at: time(key.rotatedAt), previous_secret_valid_until: time(key.previousValidUntil) };
  await audit(request, rc, admin, tenant, id, "api_key.rotated", { before: null, after });
  return jsonResponse({ ...keyJson(tenant, key), value: issued.value });
}

/** A tenant's own admin may not give a key more than its tenant has. */
async function withinCaps(
  rc: AdminContext,
  admin: AdminPrincipal,
  authority: ReturnType<typeof authorityOf>,
  policy: Policy,
): Promise<void> {
  if (admin.tenant === null) return;
  const tenant = (await authority.settings()).policy;
  const env = rc.config.tenantLimits.overrides.get(admin.tenant) ?? rc.config.tenantLimits.defaults;
  const caps = tenantScopeLimits(tenant, env);
  const over = (value: number | null, cap: number) => cap > 0 && value !== null && value > cap;
  const problems = [
    over(policy.limits.requestsPerMinute, caps.rpm) && `requests_per_minute above the tenant's ${caps.rpm}`,
    over(policy.limits.tokensPerMinute, caps.tpm) && `tokens_per_minute above the tenant's ${caps.tpm}`,
    over(policy.limits.concurrentRequests, caps.concurrent) &&
      `concurrent_requests above the tenant's ${caps.concurrent}`,
    caps.budget && policy.budget && policy.budget.amountNano > caps.budget.amountNano && "a budget above the tenant's",
    tenant.models && policy.models?.some((m) => !tenant.models?.includes(m)) && "models outside the tenant's",
  ].filter((p): p is string => typeof p === "string");
  if (problems.length > 0) throw new ApiError("permission_error", `Outside this tenant's caps: ${problems.join("; ")}`);
}

function expiry(body: Record<string, unknown>): number | null {
  if (body.expires_at !== undefined) return timeField(body.expires_at, ["expires_at"]);
  return null;
}

function keyFields(key: KeyInfo) {
  return { name: key.name, status: key.status, expires_at: time(key.expiresAt), ...policyJson(key.policy) };
}

function refuseEnvKey(rc: AdminContext, tenant: string, id: string): void {
  if (envKeyIds(rc, tenant).includes(id)) {
    throw conflict(`Key ${id} is configured in API_KEYS (read-only here): change it there and redeploy`);
  }
}

function found<T>(key: T | undefined, id: string): T {
  if (key === undefined) throw ApiError.notFound(`No key ${id} for this tenant`);
  return key;
}

async function audit(
  request: Request,
  rc: AdminContext,
  admin: AdminPrincipal,
  tenant: string,
  id: string,
  action: string,
  diff: { before: unknown; after: unknown },
): Promise<void> {
  const change = { action, tenant, target: { type: "api_key", id }, diff: auditDiff(diff.before, diff.after) };
  await registryStub(rc.env).appendAudit(change, auditContext(request, rc, admin));
}

/** The admin allowed to change `tenant`'s key `id`: a keys-scoped admin of a known tenant; an `API_KEYS` key is read-only (409). */
async function keyChanger(request: Request, rc: AdminContext, tenant: string, id: string) {
  const admin = await requireAdmin(request, rc, { scope: "keys", tenant });
  await knownTenant(rc, tenant);
  refuseEnvKey(rc, tenant, id);
  return admin;
}
