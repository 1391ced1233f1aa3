/**
 * The pool's HTTP surface:
 *   POST /internal/pool/heartbeat      a GPU worker registers / heartbeats (bearer pool token)
 *   GET  /admin/workers                every region's workers and placement counters (bearer admin token)
 *   POST /admin/workers/:id/drain      drain a worker (by id or URL) and report it empty
 * Tokens are configured as SHA-256 digests and compared in constant time.
 */

import { workerUrlAllowed } from "../config/registration.ts";
import { ApiError } from "../core/errors.ts";
import { jsonResponse, readJsonBody } from "../http/body.ts";
import { poolStub, poolView, regionNamed } from "../pool/pool-client.ts";
import { parseWorkerReport } from "../pool/worker-report.ts";
import { bearerMatches, requireAdmin } from "./bearer.ts";
import type { AdminContext } from "./bindings.ts";
import { drainWorker } from "./drain-worker.ts";

const MAX_HEARTBEAT_BYTES = 64 * 1024;

export async function handlePoolHeartbeat(request: Request, rc: AdminContext): Promise<Response> {
  const { env, config } = rc;
  const unauthenticated = () =>
    new ApiError(
      "authentication_error",
      "A valid pool token for this worker id is required (Authorization: Bearer <token>)",
    );
  if (!/^Bearer\s+\S+\s*$/i.test(request.headers.get("authorization") ?? "")) throw unauthenticated();
  const report = parseWorkerReport(await readJsonBody(request, MAX_HEARTBEAT_BYTES));
  // A worker's own token registers only its own id; the shared token exists in local development only.
  const ownToken = await bearerMatches(request.headers, config.workerTokenHashes.get(report.id));
  if (!ownToken && !(config.dev && (await bearerMatches(request.headers, config.poolTokenHash)))) {
    throw unauthenticated();
  }
  if (!workerUrlAllowed(report.url, config.allowedWorkerUrls)) {
    throw new ApiError("permission_error", "url: this worker endpoint is not in POOL_ALLOWED_WORKER_URLS", {
      param: "url",
    });
  }
  const region = regionNamed(config, report.region);
  if (!region) throw ApiError.invalid(`region: "${report.region}" is not a configured region`);
  const { state } = await poolStub(env, region).heartbeat(report, config.heartbeatTimeoutMs);
  return jsonResponse({ state });
}

export async function handleListWorkers(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc);
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
  await requireAdmin(request, rc);
  return jsonResponse(await drainWorker(rc.env, rc.config, decodeURIComponent(key), rc.requestId));
}
