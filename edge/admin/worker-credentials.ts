/**
 * Operators' view of the worker credentials (admin token; `npm run pool:credentials`):
 *   GET    /admin/worker-credentials        every credential: POOL_WORKER_TOKENS (read-only) and those
 *                                           issued at run time, per region; never a token or a full digest
 *   POST   /admin/worker-credentials        issue one: { id, url, capacity?, region? } → 201 with the token,
 *                                           shown this once (the pool keeps its SHA-256)
 *   DELETE /admin/worker-credentials/:id    revoke an issued one: its heartbeats are refused and its row
 *                                           is down (no more placements); env ones are changed in the env
 */
import { capacityOf, parseUrlBinding, WORKER_ID } from "../config/registration.ts";
import { asObject } from "../core/check.ts";
import { ConfigError } from "../core/config-values.ts";
import { ApiError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { jsonResponse, readJsonBody } from "../http/body.ts";
import { invalidatePoolView, poolStub, regionNamed } from "../pool/pool-client.ts";
import { sha256Hex } from "../tenancy/auth.ts";
import { auditDiff } from "../tenancy/registry/audit-log.ts";
import { registryStub } from "../tenancy/registry/registry-do.ts";
import { auditContext, requireAdmin } from "./admin-access.ts";
import type { AdminContext } from "./bindings.ts";

const MAX_BODY_BYTES = 4096;

export async function handleListCredentials(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, { scope: ["read", "pool"] });
  const configured = [...rc.config.workerCredentials.values()].map(({ sha256, binding }) => ({
    id: binding.id,
    url: binding.url ?? null,
    capacity: binding.capacity,
    region: binding.region ?? null,
    source: "env" as const,
    read_only: true,
    sha256_prefix: sha256.slice(0, 8),
  }));
  const issued = await Promise.all(
    rc.config.regions.map(async (region) =>
      (await poolStub(rc.env, region).credentials()).map((c) => ({ ...c, region: region.name, read_only: false })),
    ),
  );
  return jsonResponse({ credentials: [...configured, ...issued.flat()] });
}

export async function handleIssueCredential(request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "pool" });
  const body = asObject(await readJsonBody(request, MAX_BODY_BYTES), []);
  const id = body.id;
  if (typeof id !== "string" || !WORKER_ID.test(id)) {
    throw new ApiError("invalid_request_error", "id: a worker id ([A-Za-z0-9._:-], at most 64)", { param: "id" });
  }
  const url = asField("url", () => parseUrlBinding(body.url, "url"));
  const capacity = asField("capacity", () =>
    body.capacity === undefined ? rc.config.defaultWorkerCapacity : capacityOf(body.capacity, "capacity"),
  );
  const regionName = body.region === undefined ? rc.config.homeRegion : String(body.region);
  const region = regionNamed(rc.config, regionName);
  if (!region) {
    throw new ApiError("invalid_request_error", `region: "${regionName}" is not a configured region`, {
      param: "region",
    });
  }
  if (rc.config.workerCredentials.has(id)) throw conflict(`${id} is configured in POOL_WORKER_TOKENS`);
  const token = `fpw_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
  const sha256 = await sha256Hex(token);
  if ((await poolStub(rc.env, region).issueCredential({ id, sha256, url, capacity })) === "exists") {
    throw conflict(`${id} already has a credential; revoke it first`);
  }
  log("worker credential issued", { request: rc.requestId, worker: id, region: region.name, capacity });
  const after = { url: url ?? null, capacity, region: region.name };
  const change = {
    action: "worker_credential.issued",
    tenant: null,
    target: { type: "worker_credential", id },
    diff: auditDiff(null, after),
  };
  await registryStub(rc.env).appendAudit(change, auditContext(request, rc, admin));
  return jsonResponse(
    { id, token, url, capacity, region: region.name, source: "runtime", sha256_prefix: sha256.slice(0, 8) },
    { status: 201 },
  );
}

export async function handleRevokeCredential(request: Request, rc: AdminContext, key: string): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "pool" });
  const id = decodeURIComponent(key);
  if (rc.config.workerCredentials.has(id)) {
    throw conflict(`${id} is configured in POOL_WORKER_TOKENS (read-only here): remove it there and redeploy`);
  }
  const revoked = await Promise.all(rc.config.regions.map((region) => poolStub(rc.env, region).revokeCredential(id)));
  if (!revoked.includes(true))
    throw ApiError.notFound(`No issued worker credential "${id}" (or it is revoked already)`);
  invalidatePoolView();
  log("worker credential revoked", { request: rc.requestId, worker: id });
  const change = {
    action: "worker_credential.revoked",
    tenant: null,
    target: { type: "worker_credential", id },
    diff: auditDiff({ revoked: false }, { revoked: true }),
  };
  await registryStub(rc.env).appendAudit(change, auditContext(request, rc, admin));
  return jsonResponse({ id, revoked: true });
}

/** A field's ConfigError as a 400 naming the field. */
function asField<T>(param: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ConfigError) throw new ApiError("invalid_request_error", error.message, { param });
    throw error;
  }
}

function conflict(message: string): ApiError {
  return new ApiError("invalid_request_error", message, { status: 409, shouldRetry: false });
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}
