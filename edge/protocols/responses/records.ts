/**
 * GET and DELETE /v1/responses/{id}: stored records, found through the session the ID names, for a
 * key its tenant's authority still accepts.
 */
import { verifyId } from "../../../shared/ids.ts";
import { ApiError } from "../../core/errors.ts";
import { jsonResponse } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import { authorize } from "../../tenancy/admission.ts";
import { identifyCaller } from "../../tenancy/auth.ts";
import type { TenantAuthorityBindings } from "../../tenancy/authority/tenant-authority-do.ts";
import type { ResponseStoreBindings } from "./response-store-do.ts";
import { loadResponse } from "./sealed-records.ts";

export async function handleGetResponse(
  request: Request,
  rc: RequestContext<ResponseStoreBindings & TenantAuthorityBindings>,
  id: string,
): Promise<Response> {
  const { store, tenant, session } = await locate(request, rc, id);
  const response = store ? await loadResponse(store, { secret: rc.config.idSecret, tenant, session }, id) : null;
  if (!response) throw notFound(id);
  return jsonResponse(response, { headers: { "x-request-id": rc.requestId } });
}

export async function handleDeleteResponse(
  request: Request,
  rc: RequestContext<ResponseStoreBindings & TenantAuthorityBindings>,
  id: string,
): Promise<Response> {
  const { store, tenant } = await locate(request, rc, id);
  if (!store || !(await store.delete(tenant, id))) throw notFound(id);
  return jsonResponse({ id, object: "response", deleted: true }, { headers: { "x-request-id": rc.requestId } });
}

async function locate(
  request: Request,
  rc: RequestContext<ResponseStoreBindings & TenantAuthorityBindings>,
  id: string,
) {
  const caller = await identifyCaller(request.headers, rc.config);
  await authorize(rc, caller);
  const { tenant } = caller;
  const decoded = await verifyId(rc.config.idSecret, id, tenant);
  const session = decoded?.kind === "resp" ? decoded.session : undefined;
  const store = session === undefined ? undefined : rc.env.RESPONSES.getByName(session);
  return { store, tenant, session: session ?? "" };
}

function notFound(id: string): ApiError {
  return new ApiError("not_found_error", `Response with id '${id}' not found.`, { param: "response_id" });
}
