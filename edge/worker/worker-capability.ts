/**
 * The capability every edge → worker call carries (shared/capability.ts): signed here with the
 * target worker's own key, derived from the edge's master secret (ID_SECRET) and the worker's id, and
 * valid for CAPABILITY_TTL_S. Workers verify it before reading a body and refuse a call whose tenant,
 * session or operation it does not name.
 */
import { CAPABILITY_HEADER, type CapabilityOp, NO_SCOPE, signCapability, workerKey } from "../../shared/capability.ts";

/** How long a capability is good for: one call's start (a stream may run longer; it is checked once). */
export const CAPABILITY_TTL_S = 120;

/** What one call may do: the tenant and session it is about (`NO_SCOPE` for none) and its operations. */
export interface CallScope {
  tenant: string;
  session: string;
  ops: CapabilityOp[];
}

/** Scope of calls about the worker itself (health, stats, drain). */
export function workerScope(...ops: CapabilityOp[]): CallScope {
  return { tenant: NO_SCOPE, session: NO_SCOPE, ops };
}

const keys = new Map<string, Promise<Uint8Array>>();
const MAX_KEYS = 256;

function keyOf(master: string, workerId: string): Promise<Uint8Array> {
  const cacheKey = `${master}\u0000${workerId}`;
  let key = keys.get(cacheKey);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = workerKey(master, workerId);
    keys.set(cacheKey, key);
  }
  return key;
}

/** The headers that carry a capability for `scope` on worker `workerId`. */
export async function capabilityHeaders(
  master: string,
  workerId: string,
  scope: CallScope,
  nowMs = Date.now(),
): Promise<Record<string, string>> {
  const expires = Math.floor(nowMs / 1000) + CAPABILITY_TTL_S;
  const value = await signCapability(await keyOf(master, workerId), { worker: workerId, ...scope, expires });
  return { [CAPABILITY_HEADER]: value };
}
