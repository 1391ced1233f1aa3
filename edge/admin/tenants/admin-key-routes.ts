/**
 * Scoped admin keys, managed by the env admin token only:
 *   GET    /admin/admin-keys          list
 *   POST   /admin/admin-keys          issue { name, scopes: ["read" | "keys" | "billing" | "pool"], tenant_id? }
 *                                     → 201 with `value`, the key, shown this once
 *   DELETE /admin/admin-keys/:id      revoke (refused from its next request)
 * A key with `tenant_id` reaches that tenant only (its keys, its usage, its audit records); `pool`
 * is deployment-wide and cannot be given to one.
 */
import { fail } from "../../core/check.ts";
import { ApiError } from "../../core/errors.ts";
import { jsonResponse } from "../../http/body.ts";
import { issueKey } from "../../tenancy/keys/key-digest.ts";
import { ADMIN_SCOPES, type AdminScope } from "../../tenancy/registry/admin-keys.ts";
import { registryStub } from "../../tenancy/registry/registry-do.ts";
import { auditContext, requireRoot } from "../admin-access.ts";
import type { AdminContext } from "../bindings.ts";
import { bodyObject, nameField, pageRequest, unknownCursor } from "./admin-input.ts";
import { adminKeyJson } from "./render.ts";
import { conflict, knownTenant } from "./tenant-routes.ts";

export async function handleListAdminKeys(request: Request, rc: AdminContext): Promise<Response> {
  await requireRoot(request, rc);
  const page = await registryStub(rc.env).adminKeys(pageRequest(new URL(request.url)));
  if (!page) throw unknownCursor();
  return jsonResponse({ ...page, data: page.data.map(adminKeyJson) });
}

export async function handleCreateAdminKey(request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireRoot(request, rc);
  const body = await bodyObject(request);
  const name = nameField(body);
  const scopes = body.scopes;
  if (!Array.isArray(scopes) || scopes.length === 0 || scopes.some((s) => !ADMIN_SCOPES.includes(s as AdminScope))) {
    fail(["scopes"], `a non-empty array of ${ADMIN_SCOPES.join(", ")}`);
  }
  const tenant = body.tenant_id ?? null;
  if (tenant !== null) {
    if (typeof tenant !== "string") fail(["tenant_id"], "a tenant id or null");
    await knownTenant(rc, tenant);
    if (scopes.includes("pool")) fail(["scopes"], "pool is deployment-wide: not for a tenant's admin key");
  }
  const issued = await issueKey(rc.config.idSecret, { kind: "admin" });
  const key = {
    id: issued.keyId,
    name,
    scopes: [...new Set(scopes as AdminScope[])],
    tenant,
    digest: issued.digest,
    hint: issued.hint,
  };
  const created = await registryStub(rc.env).createAdminKey(key, auditContext(request, rc, admin));
  if (!created) throw ApiError.internal("An admin key id collided; try again");
  return jsonResponse({ ...adminKeyJson(created), value: issued.value }, { status: 201 });
}

export async function handleRevokeAdminKey(request: Request, rc: AdminContext, id: string): Promise<Response> {
  const admin = await requireRoot(request, rc);
  const revoked = await registryStub(rc.env).revokeAdminKey(id, auditContext(request, rc, admin));
  if (revoked === "revoked") throw conflict(`Admin key ${id} is revoked already`);
  if (!revoked) throw ApiError.notFound(`No admin key ${id}`);
  return jsonResponse(adminKeyJson(revoked));
}
