/**
 * The pool's HTTP surface:
 *   POST /internal/pool/heartbeat      a GPU worker registers / heartbeats (bearer: its own credential)
 *   POST /internal/pool/drain          a GPU worker drains itself on shutdown (bearer: its own credential)
 *   GET  /admin/workers                every region's workers and placement counters (bearer admin token)
 *   POST /admin/workers/:id/drain      drain a worker (by id or URL) and report it empty
 * Tokens are configured as SHA-256 digests and compared in constant time.
 */

import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { WorkerBinding } from "../config/registration.ts";
import { ValidationError } from "../core/check.ts";
import { ApiError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { jsonResponse, readJsonBody } from "../http/body.ts";
import { recordRegistrationRefused } from "../metrics/record.ts";
import { poolStub, poolView, regionNamed } from "../pool/pool-client.ts";
import type { Refusal } from "../pool/registration-check.ts";
import { ownDrainableRow, parseSelfDrainRequest, type SelfDrainRequest } from "../pool/self-drain.ts";
import { parseWorkerReport } from "../pool/worker-report.ts";
import { sha256Hex } from "../tenancy/auth.ts";
import { auditDiff } from "../tenancy/registry/audit-log.ts";
import { registryStub } from "../tenancy/registry/registry-do.ts";
import { auditContext, requireAdmin } from "./admin-access.ts";
import { bearerMatches } from "./bearer.ts";
import type { AdminContext } from "./bindings.ts";
import { drainWorker } from "./drain-worker.ts";

const MAX_HEARTBEAT_BYTES = 64 * 1024;

/**
 * A heartbeat: the bearer token names the worker's credential — one in POOL_WORKER_TOKENS for the
 * report's id (compared here in constant time), else one issued at run time (looked up by the pool
 * DO from the token's digest), else, in local development only, the shared POOL_TOKEN_SHA256. The
 * pool DO checks the report against the credential's binding and the rows it holds. Every refusal
 * is logged (worker id, reason; never the token) and counted by reason.
 */
export async function handlePoolHeartbeat(request: Request, rc: AdminContext): Promise<Response> {
  const { env, config } = rc;
  if (!/^Bearer\s+\S+\s*$/i.test(request.headers.get("authorization") ?? "")) {
    refuse(rc, { reason: "no-token", status: 401, message: UNAUTHENTICATED });
  }
  let report: WorkerReport;
  try {
    report = parseWorkerReport(await readJsonBody(request, MAX_HEARTBEAT_BYTES));
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    refuse(rc, { reason: "invalid-report", status: 400, message: error.message, param: error.path.join(".") });
  }
  const region = regionNamed(config, report.region);
  if (!region) {
    const message = `region: "${report.region}" is not a configured region`;
    refuse(rc, { reason: "unknown-region", status: 400, message, param: "region" }, report);
  }
  const auth = await credentialOf(request, rc, report.id);
  if (auth === undefined) refuse(rc, { reason: "bad-token", status: 401, message: UNAUTHENTICATED }, report);
  const result = await poolStub(env, region).register({
    region: region.name,
    staticUrls: region.workers,
    timeoutMs: config.heartbeatTimeoutMs,
    report,
    auth,
    allowList: config.allowedWorkerUrls,
  });
  if (!result.ok) refuse(rc, result.refusal, report);
  return jsonResponse({ state: result.state });
}

/**
 * A worker drains itself (its shutdown path): the same credential as its heartbeats, checked the same
 * way for the id the body names, drains only that id's own row in that region, as an admin drain
 * would (drain-worker.ts); any other row, or none, is refused before anything is drained.
 */
export async function handlePoolSelfDrain(request: Request, rc: AdminContext): Promise<Response> {
  const { env, config } = rc;
  if (!/^Bearer\s+\S+\s*$/i.test(request.headers.get("authorization") ?? "")) {
    refuse(rc, { reason: "no-token", status: 401, message: UNAUTHENTICATED });
  }
  let ask: SelfDrainRequest;
  try {
    ask = parseSelfDrainRequest(await readJsonBody(request, MAX_HEARTBEAT_BYTES));
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    refuse(rc, { reason: "invalid-report", status: 400, message: error.message, param: error.path.join(".") });
  }
  const region = regionNamed(config, ask.region);
  if (!region) {
    refuse(rc, {
      reason: "unknown-region",
      status: 400,
      message: `region: "${ask.region}" is not a configured region`,
    });
  }
  const auth = await credentialOf(request, rc, ask.id);
  let binding: WorkerBinding | undefined;
  if (auth !== undefined && "binding" in auth) binding = auth.binding;
  else if (auth !== undefined) {
    const found = await poolStub(env, region).lookupCredential(ask.id, auth.digest, region.name);
    if (found.kind === "binding") binding = found.binding;
  }
  if (binding === undefined) refuse(rc, { reason: "bad-token", status: 401, message: UNAUTHENTICATED });
  const row = ownDrainableRow(await poolView(env, config, true), binding, region.name);
  if (!row) {
    throw ApiError.notFound(`No live pool row for worker "${ask.id}" in region "${region.name}"`);
  }
  log("worker self-drain", { request: rc.requestId, worker: row.id, url: row.url });
  return jsonResponse(await drainWorker(env, config, row.id, rc.requestId));
}

/** Log and count a refused heartbeat (never its token), then answer it in the protocol's error shape. */
function refuse(rc: AdminContext, refusal: Refusal, report?: WorkerReport): never {
  log("pool registration refused", {
    request: rc.requestId,
    reason: refusal.reason,
    worker: report?.id,
    url: report?.url,
    region: report?.region,
  });
  rc.waitUntil(recordRegistrationRefused(rc.env, refusal.reason));
  const type = ERROR_TYPES[refusal.status];
  throw new ApiError(type, refusal.message, {
    status: refusal.status,
    ...(refusal.param ? { param: refusal.param } : {}),
    // A conflict here does not clear by retrying the same report.
    ...(refusal.status === 409 ? { shouldRetry: false } : {}),
  });
}

const ERROR_TYPES = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  409: "invalid_request_error",
} as const;

const UNAUTHENTICATED = "A valid pool token for this worker id is required (Authorization: Bearer <token>)";

/**
 * The credential the request's token is for `id`: an env one's binding, the development token's, or
 * (no env credential for this id) the token's digest for the pool DO to look up. Undefined: refused.
 */
async function credentialOf(
  request: Request,
  rc: AdminContext,
  id: string,
): Promise<{ binding: WorkerBinding } | { digest: string } | undefined> {
  const { config } = rc;
  const own = config.workerCredentials.get(id);
  if (own && (await bearerMatches(request.headers, own.sha256))) return { binding: own.binding };
  // The shared token exists in local development only.
  if (config.dev && (await bearerMatches(request.headers, config.poolTokenHash))) {
    return {
      binding: { id, url: undefined, capacity: config.defaultWorkerCapacity, region: undefined, source: "dev" },
    };
  }
  if (own) return undefined;
  const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  return { digest: await sha256Hex(token) };
}

export async function handleListWorkers(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, { scope: ["read", "pool"] });
  const workers = await poolView(rc.env, rc.config, true);
  const regions = await Promise.all(
    rc.config.regions.map(async (region) => ({
      name: region.name,
      location_hint: region.locationHint ?? null,
      home: region.name === rc.config.homeRegion,
      placement: await poolStub(rc.env, region).stats(),
      workers: workers.filter((w) => w.region === region.name),
    })),
  );
  return jsonResponse({ regions });
}

export async function handleDrainWorker(request: Request, rc: AdminContext, key: string): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "pool" });
  const report = await drainWorker(rc.env, rc.config, decodeURIComponent(key), rc.requestId);
  const { worker, ...outcome } = report;
  await registryStub(rc.env).appendAudit(
    {
      action: "worker.drained",
      tenant: null,
      target: { type: "worker", id: worker.id },
      diff: auditDiff(null, { ...worker, ...outcome }),
    },
    auditContext(request, rc, admin),
  );
  return jsonResponse(report);
}
