/**
 * Who may call an `/admin/…` route. First the cross-site guard (cross-site.ts), then the caller:
 * - the env admin token (its SHA-256 is ADMIN_TOKEN_SHA256): the break-glass root, every scope, every
 *   tenant, the only one that manages admin keys;
 * - a scoped admin key (`sk-fra-…`, issued by root): its scopes (`read`, `keys`, `billing`, `pool`)
 *   and, when it has one, the one tenant it reaches. Checked with the registry on every request
 *   (a revoked admin key is refused at once).
 * Both come as `Authorization: Bearer <token>`; reads (GET/HEAD) also take one as the password of
 * HTTP Basic auth (any user name) so a browser can open the status page (a read's 401 asks for Basic
 * credentials); a state-changing route takes the Bearer header only, which no browser attaches on
 * its own. A route names the scopes that allow it and the tenant it touches: a tenant-scoped key is
 * refused (403) anything outside its tenant and every deployment-wide resource.
 */
import { ApiError } from "../core/errors.ts";
import type { RequestContext } from "../http/context.ts";
import { checkMatches, keyDigest } from "../tenancy/keys/key-digest.ts";
import { parseAdminKey } from "../tenancy/keys/key-format.ts";
import { ADMIN_SCOPES, type AdminScope } from "../tenancy/registry/admin-keys.ts";
import type { AuditActor } from "../tenancy/registry/audit-log.ts";
import { type RegistryBindings, registryStub } from "../tenancy/registry/registry-do.ts";
import { basicPassword, bearerToken, tokenMatches } from "./bearer.ts";
import { isStateChanging, refuseCrossSite } from "./cross-site.ts";

export interface AdminPrincipal {
  actor: AuditActor;
  scopes: readonly AdminScope[];
  /** The one tenant this admin reaches; null: all of them. */
  tenant: string | null;
  root: boolean;
}

export interface AdminNeed {
  /** Any of these scopes allows the route. */
  scope: AdminScope | readonly AdminScope[];
  /**
   * The tenant the route touches; `"listing"`: a list the handler narrows to the admin's tenant;
   * absent: a deployment-wide resource (pool, prices' changes, metrics), for unconfined admins only.
   */
  tenant?: string | "listing" | undefined;
  /** The HTML status page (a top-level navigation from elsewhere is allowed to open it). */
  page?: boolean;
}

export async function requireAdmin(
  request: Request,
  rc: RequestContext<RegistryBindings>,
  need: AdminNeed,
): Promise<AdminPrincipal> {
  refuseCrossSite(request, { page: need.page ?? false });
  const principal = await identifyAdmin(request, rc);
  const allowed = typeof need.scope === "string" ? [need.scope] : need.scope;
  if (!allowed.some((scope) => principal.scopes.includes(scope))) {
    throw refused(`This admin key lacks the scope this route needs (${allowed.join(" or ")})`);
  }
  if (principal.tenant !== null) {
    if (need.tenant === undefined) throw refused("A tenant's admin key cannot reach deployment-wide resources");
    if (need.tenant !== "listing" && need.tenant !== principal.tenant) {
      throw refused(`This admin key reaches tenant "${principal.tenant}" only`);
    }
  }
  return principal;
}

/** Root only (admin keys are managed by the env admin token alone). */
export async function requireRoot(request: Request, rc: RequestContext<RegistryBindings>): Promise<AdminPrincipal> {
  refuseCrossSite(request);
  const principal = await identifyAdmin(request, rc);
  if (!principal.root) throw refused("Only the env admin token manages admin keys");
  return principal;
}

async function identifyAdmin(request: Request, rc: RequestContext<RegistryBindings>): Promise<AdminPrincipal> {
  const write = isStateChanging(request);
  const token = bearerToken(request.headers) ?? (write ? undefined : basicPassword(request.headers));
  if (token !== undefined) {
    if (await tokenMatches(token, rc.config.adminTokenHash)) {
      return { actor: { type: "root" }, scopes: ADMIN_SCOPES, tenant: null, root: true };
    }
    const parts = parseAdminKey(token);
    if (parts && (await checkMatches(rc.config.idSecret, parts))) {
      const key = await registryStub(rc.env).authenticateAdmin(parts.keyId, await keyDigest(rc.config.idSecret, parts));
      if (key) {
        return {
          actor: { type: "admin_key", id: key.id, name: key.name },
          scopes: key.scopes,
          tenant: key.tenant,
          root: false,
        };
      }
    }
  }
  throw new ApiError(
    "authentication_error",
    "A valid admin token or admin key is required (Authorization: Bearer <token>)",
    write ? {} : { headers: { "www-authenticate": 'Basic realm="frontier-admin", charset="UTF-8"' } },
  );
}

function refused(message: string): ApiError {
  return new ApiError("permission_error", message);
}

/** Who made a change and from where, for its audit record. */
export function auditContext(request: Request, rc: RequestContext<unknown>, admin: AdminPrincipal) {
  return { actor: admin.actor, requestId: rc.requestId, source: request.headers.get("cf-connecting-ip") };
}
