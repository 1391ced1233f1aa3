/**
 * The audit trail:
 *   GET /admin/audit[?tenant_id&action&actor_id&since&until&limit&after_id&before_id]
 *       newest first; `since`/`until` are RFC 3339 times; a tenant's admin sees its tenant's records only
 *   GET /admin/audit/verify
 *       recompute the hash chain: `{ok, rows, head, first_bad}` (keep `head.hash` elsewhere to catch
 *       rows cut off the end too)
 */
import { ApiError } from "../../core/errors.ts";
import { jsonResponse } from "../../http/body.ts";
import { registryStub } from "../../tenancy/registry/registry-do.ts";
import { requireAdmin } from "../admin-access.ts";
import type { AdminContext } from "../bindings.ts";
import { pageRequest, timeField, unknownCursor } from "./admin-input.ts";
import { auditJson } from "./render.ts";

export async function handleListAudit(request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "read", tenant: "listing" });
  const url = new URL(request.url);
  const query = (name: string) => url.searchParams.get(name) ?? undefined;
  const asked = query("tenant_id");
  if (admin.tenant !== null && asked !== undefined && asked !== admin.tenant) {
    throw new ApiError("permission_error", `This admin key reaches tenant "${admin.tenant}" only`);
  }
  const at = (name: string) => {
    const value = query(name);
    return value === undefined ? undefined : (timeField(value, [name]) ?? undefined);
  };
  const filter = {
    tenant: admin.tenant ?? asked,
    action: query("action"),
    actorId: query("actor_id"),
    since: at("since"),
    until: at("until"),
  };
  const page = await registryStub(rc.env).audit(filter, pageRequest(url));
  if (!page) throw unknownCursor();
  return jsonResponse({ ...page, data: page.data.map(auditJson) });
}

export async function handleVerifyAudit(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, { scope: "read" });
  const verified = await registryStub(rc.env).verifyAudit();
  return jsonResponse({
    ok: verified.ok,
    rows: verified.rows,
    head: verified.head,
    first_bad: verified.firstBad ? { id: verified.firstBad.id, reason: verified.firstBad.reason } : null,
  });
}
