/** GET /healthz (no auth): asks every pool member not known to be down for Health. 200 when at least one is ready. */

import { jsonResponse } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import { poolView } from "../pool/pool-client.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { workerCallHeaders } from "../turn/worker-identity.ts";
import { workerScope } from "../worker/worker-capability.ts";
import { workerClient } from "../worker/worker-client.ts";
import { rpcErrorToApiError } from "../worker/worker-errors.ts";

const HEALTH_TIMEOUT_MS = 2000;

export async function handleHealth(rc: RequestContext<PoolBindings>): Promise<Response> {
  const members = (await poolView(rc.env, rc.config)).filter((w) => w.state !== "down").map((w) => w.url);
  const workers = await Promise.all(
    members.map(async (url, index) => {
      try {
        const headers = await workerCallHeaders(rc.env, rc.config, url, workerScope("health"));
        const health = await workerClient(url, rc.config.workerToken).health(
          {},
          { timeoutMs: HEALTH_TIMEOUT_MS, headers },
        );
        return {
          index,
          ready: health.ready,
          worker_id: health.workerId,
          model: health.modelName,
          context_size: health.contextSize,
          engine: health.engineBuild,
        };
      } catch (error) {
        return { index, ready: false, error: rpcErrorToApiError(error).message };
      }
    }),
  );
  const ready = workers.filter((w) => w.ready).length;
  // No worker up (none listed, or none ready) is "unavailable", never "ok" with a 503.
  const status = ready === 0 ? "unavailable" : ready === workers.length ? "ok" : "degraded";
  return jsonResponse({ status, workers }, { status: ready > 0 ? 200 : 503 });
}
