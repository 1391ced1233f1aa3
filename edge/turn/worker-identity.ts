/**
 * Which worker id the edge signs a call's capability for, from the URL it calls: a static worker's
 * id from WORKER_IDS, else the id of the pool member at that URL (a registered worker's own id,
 * bound to its pool credential), else the URL itself (a static worker never named: its calls are
 * refused until WORKER_IDS names it, with a PERMISSION_DENIED naming the wrong worker).
 */
import type { EdgeConfig } from "../config/config.ts";
import { poolView } from "../pool/pool-client.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { type CallScope, capabilityHeaders } from "../worker/worker-capability.ts";

export async function workerIdOf(env: PoolBindings, config: EdgeConfig, url: string): Promise<string> {
  const configured = config.workerIds.get(url);
  if (configured !== undefined) return configured;
  const member = (await poolView(env, config)).find((w) => w.url === url);
  return member?.id ?? url;
}

/** The capability headers of one call to the worker at `url`. */
export async function workerCallHeaders(
  env: PoolBindings,
  config: EdgeConfig,
  url: string,
  scope: CallScope,
): Promise<Record<string, string>> {
  return capabilityHeaders(config.idSecret, await workerIdOf(env, config, url), scope);
}
