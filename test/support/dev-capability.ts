/**
 * What the edge sends a development worker with each call, for tests that call a worker directly:
 * a capability signed with the worker's key derived from the public development secret, and a
 * session's ID key. A test that calls without them is refused, as any caller holding only the token.
 */
import { type CapabilityOp, NO_SCOPE, signCapability, workerKey } from "../../shared/capability.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { sessionIdKey } from "../../shared/ids.ts";

export const DEV_WORKER_ID = "worker-1";

/** The `x-frontier-capability` value for `ops` on `tenant`/`session` (NO_SCOPE for none). */
export async function devCapability(
  ops: CapabilityOp[],
  tenant: string = NO_SCOPE,
  session: string = NO_SCOPE,
  options: { workerId?: string; master?: string; ttlSeconds?: number } = {},
): Promise<string> {
  const workerId = options.workerId ?? DEV_WORKER_ID;
  const key = await workerKey(options.master ?? DEV_ID_SECRET, workerId);
  const expires = Math.floor(Date.now() / 1000) + (options.ttlSeconds ?? 120);
  return signCapability(key, { worker: workerId, tenant, session, ops, expires });
}

/** The session's ID key, as the edge puts it in GenerateRequest.session_id_key. */
export function devSessionIdKey(tenant: string, session: string): Promise<Uint8Array> {
  return sessionIdKey(DEV_ID_SECRET, tenant, session);
}
