/** GET /healthz (no auth): asks every pool member not known to be down for Health. 200 when at least one is ready. */

import { jsonResponse } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { askPoolHealth } from "../turn/pool-health.ts";

export async function handleHealth(rc: RequestContext<PoolBindings>): Promise<Response> {
  const answers = await askPoolHealth(rc.env, rc.config);
  const workers = answers.map((answer, index) =>
    "error" in answer
      ? { index, ready: false, error: answer.error }
      : {
          index,
          ready: answer.health.ready,
          worker_id: answer.health.workerId,
          model: answer.health.modelName,
          context_size: answer.health.contextSize,
          engine: answer.health.engineBuild,
        },
  );
  const ready = workers.filter((w) => w.ready).length;
  // No worker up (none listed, or none ready) is "unavailable", never "ok" with a 503.
  const status = ready === 0 ? "unavailable" : ready === workers.length ? "ok" : "degraded";
  return jsonResponse({ status, workers }, { status: ready > 0 ? 200 : 503 });
}
