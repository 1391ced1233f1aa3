/**
 * A capability for the edge benchmarks' direct calls to the instant worker (bench/edge/instant-worker.ts):
 * signed once with the instant worker's own key (derived from the development ID secret, as its
 * config derives it), for no session and valid for an hour. The instant worker checks only the
 * gate's part (MAC, worker id, expiry): the body's tenant and session are the real service's check.
 * What a bare turn shape sends as a fixed header; the edge signs one per call, and
 * `signingCostMs` times that signing (the per-call key import and HMAC) on its own.
 */

import { capabilityHeaders } from "../../edge/worker/worker-capability.ts";
import { CAPABILITY_HEADER, NO_SCOPE, signCapability, workerKey } from "../../shared/capability.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { INSTANT_WORKER_ID } from "./instant-worker.ts";

const HOUR_S = 3600;

/** The `x-frontier-capability` header for direct calls to the instant worker. */
export async function instantWorkerCapability(): Promise<Record<string, string>> {
  const key = await workerKey(DEV_ID_SECRET, INSTANT_WORKER_ID);
  const expires = Math.floor(Date.now() / 1000) + HOUR_S;
  const capability = {
    worker: INSTANT_WORKER_ID,
    tenant: NO_SCOPE,
    session: NO_SCOPE,
    ops: ["generate" as const],
    expires,
  };
  return { [CAPABILITY_HEADER]: await signCapability(key, capability) };
}

/** Median ms of the edge's own per-call signing (capabilityHeaders, its worker key cached), over `n` calls. */
export async function signingCostMs(n: number): Promise<number> {
  const scope = { tenant: "local", session: "0123456789abcdef0123456789abcdef", ops: ["generate" as const] };
  await capabilityHeaders(DEV_ID_SECRET, INSTANT_WORKER_ID, scope);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await capabilityHeaders(DEV_ID_SECRET, INSTANT_WORKER_ID, scope);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}
