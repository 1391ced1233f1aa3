/**
 * Tenants at run time (docs/operations/tenants.md):
 *   GET    /admin/tenants[?include_archived=true]   list (an admin confined to a tenant sees only it)
 *   POST   /admin/tenants                            create { id?, name, limits?, budget?, models? }
 *   GET    /admin/tenants/:id                        read, with its policy
 *   POST   /admin/tenants/:id                        update { name?, limits?, budget?, models? }
 *   POST   /admin/tenants/:id/archive                archive: every key of it is refused from the next request
 * API_KEYS's tenants are listed as `source: "env"`; their policy can be set here, but they cannot be
 * archived (their keys live in the env: 409).
 */
import { ApiError } from "../../core/errors.ts";
import { jsonResponse } from "../../http/body.ts";
import { authorityOf } from "../../tenancy/admission.ts";
import { OPEN_POLICY, type Policy } from "../../tenancy/authority/policy.ts";
import { newKeyId, TENANT_ID } from "../../tenancy/keys/key-format.ts";
import { auditDiff } from "../../tenancy/registry/audit-log.ts";
import { registryStub } from "../../tenancy/registry/registry-do.ts";
import type { DirectoryTenant } from "../../tenancy/registry/tenant-directory.ts";
import { auditContext, requireAdmin } from "../admin-access.ts";
import type { AdminContext } from "../bindings.ts";
import { bodyObject, nameField, pageRequest, policyFields, unknownCursor } from "./admin-input.ts";
import { policyJson, spendJson, tenantJson, tenantListItem } from "./render.ts";

export async function handleListTenants(request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: ["read", "keys", "billing"], tenant: "listing" });
  const url = new URL(request.url);
  const registry = await withEnvTenants(rc);
  const includeArchived = url.searchParams.get("include_archived") === "true";
  const page = await registry.tenants(pageRequest(url), { includeArchived, only: admin.tenant ?? undefined });
  if (!page) throw unknownCursor();
  return jsonResponse({ ...page, data: page.data.map(tenantListItem) });
}

export async function handleCreateTenant(request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "keys" });
  const body = await bodyObject(request);
  const id = body.id === undefined ? `t${newKeyId()}` : body.id;
  if (typeof id !== "string" || !TENANT_ID.test(id)) {
    throw new ApiError("invalid_request_error", "id: 1-40 of [a-z0-9_-], starting and ending with a letter or digit", {
      param: "id",
    });
  }
  const name = nameField(body);
  const policy = policyFields(body, OPEN_POLICY);
  const hasPolicy = hasPolicyFields(body);
  const registry = await withEnvTenants(rc);
  const created = await registry.createTenant({ id, name }, auditContext(request, rc, admin));
  if (!created) throw conflict(`Tenant "${id}" exists already (archived tenants keep their id)`);
  const authority = authorityOf(rc.env, id);
  const settings = hasPolicy ? await authority.configure(policy) : await authority.settings();
  if (hasPolicy) await auditPolicy(request, rc, admin, id, OPEN_POLICY, policy);
  return jsonResponse(tenantJson(created, settings), { status: 201 });
}

export async function handleGetTenant(request: Request, rc: AdminContext, id: string): Promise<Response> {
  await requireAdmin(request, rc, { scope: ["read", "keys", "billing"], tenant: id });
  const tenant = await knownTenant(rc, id);
  const authority = authorityOf(rc.env, id);
  const [settings, spend] = await Promise.all([authority.settings(), authority.spend()]);
  return jsonResponse({ ...tenantJson(tenant, settings), spend: spendJson(spend.tenant) });
}

export async function handleUpdateTenant(request: Request, rc: AdminContext, id: string): Promise<Response> {
  const body = await bodyObject(request);
  const touchesPolicy = hasPolicyFields(body);
  // The name is an operator's (keys); rates, budgets and models are billing's. Neither for a tenant's own admin.
  const scopes = touchesPolicy ? ["billing" as const] : ["keys" as const];
  const admin = await requireAdmin(request, rc, { scope: scopes });
  if (touchesPolicy && body.name !== undefined && !admin.scopes.includes("keys")) {
    throw new ApiError("permission_error", "Renaming a tenant needs the keys scope");
  }
  let tenant = await knownTenant(rc, id);
  if (tenant.archivedAt !== null) throw conflict(`Tenant "${id}" is archived`);
  const authority = authorityOf(rc.env, id);
  const before = await authority.settings();
  const policy = policyFields(body, before.policy);
  if (body.name !== undefined) {
    tenant = (await registryStub(rc.env).renameTenant(id, nameField(body), auditContext(request, rc, admin))) ?? tenant;
  }
  const settings = touchesPolicy ? await authority.configure(policy) : before;
  if (touchesPolicy) await auditPolicy(request, rc, admin, id, before.policy, policy);
  return jsonResponse(tenantJson(tenant, settings));
}

export async function handleArchiveTenant(request: Request, rc: AdminContext, id: string): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "keys" });
  const tenant = await knownTenant(rc, id);
  if ([...rc.config.apiKeys.values()].includes(id)) {
    throw conflict(`Tenant "${id}" has keys in API_KEYS (read-only here): remove them there and redeploy first`);
  }
  const settings = await authorityOf(rc.env, id).archive();
  const archived = await registryStub(rc.env).archiveTenant(id, auditContext(request, rc, admin));
  return jsonResponse(tenantJson(archived ?? tenant, settings));
}

function hasPolicyFields(body: Record<string, unknown>): boolean {
  return ["limits", "budget", "models"].some((field) => body[field] !== undefined);
}

/** The registry with API_KEYS's tenants listed. */
async function withEnvTenants(rc: AdminContext) {
  const registry = registryStub(rc.env);
  await registry.addEnvTenants([...new Set(rc.config.apiKeys.values())]);
  return registry;
}

/** A tenant the registry knows (API_KEYS's included), or a 404. */
export async function knownTenant(rc: AdminContext, id: string): Promise<DirectoryTenant> {
  const tenant = await (await withEnvTenants(rc)).tenant(id);
  if (!tenant) throw ApiError.notFound(`No tenant "${id}"`);
  return tenant;
}

async function auditPolicy(
  request: Request,
  rc: AdminContext,
  admin: Parameters<typeof auditContext>[2],
  tenant: string,
  before: Policy,
  after: Policy,
): Promise<void> {
  const diff = changedFields(policyJson(before), policyJson(after));
  if (!diff) return;
  const change = {
    action: "tenant.policy_updated",
    tenant,
    target: { type: "tenant", id: tenant },
    diff: auditDiff(diff.before, diff.after),
  };
  await registryStub(rc.env).appendAudit(change, auditContext(request, rc, admin));
}

/** The fields that differ, on both sides; undefined when none does. */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>) {
  const was: Record<string, unknown> = {};
  const now: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    was[key] = before[key] ?? null;
    now[key] = after[key] ?? null;
  }
  return Object.keys(now).length === 0 ? undefined : { before: was, after: now };
}

export function conflict(message: string): ApiError {
  return new ApiError("invalid_request_error", message, { status: 409, shouldRetry: false });
}
