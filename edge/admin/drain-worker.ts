/**
 * Drain one worker: the pool stops placing sessions on it, the worker (Drain RPC) lets its turns in
 * flight finish, checkpoints every resident session to the shared store and forgets it, and each
 * handed-over session's SessionDO moves to another worker (epoch + 1), whose next turn restores the
 * checkpoint. Sessions parked earlier on the drained worker move lazily: it refuses their next turn
 * (DRAINING) and the edge fails them over.
 */

import type { EdgeConfig } from "../config/config.ts";
import { ApiError } from "../core/errors.ts";
import { log } from "../core/log.ts";
import { invalidatePoolView, placeNewSession, poolStub, poolView, regionNamed } from "../pool/pool-client.ts";
import type { RouteBindings } from "../session/resolved-session.ts";
import { capabilityHeaders, workerScope } from "../worker/worker-capability.ts";
import { workerClient } from "../worker/worker-client.ts";
import { rpcErrorToApiError } from "../worker/worker-errors.ts";

export interface DrainReport {
  worker: { id: string; url: string; region: string };
  state: "drained";
  /** Sessions the worker handed over. */
  handed_over: number;
  /** Of those, sessions with a checkpoint in the store (the others had no completed turn). */
  checkpointed: number;
  /** Sessions whose SessionDO now names another worker. */
  moved: number;
  /** Sessions still resident on the worker (0: empty). */
  resident_sessions: number;
}

/** Drain can wait for long turns in flight. */
const DRAIN_TIMEOUT_MS = 15 * 60_000;

export async function drainWorker(
  env: RouteBindings,
  config: EdgeConfig,
  key: string,
  requestId: string,
): Promise<DrainReport> {
  // A restarted worker keeps its id under a new URL: prefer the member that is not down.
  const matches = (await poolView(env, config, true)).filter((w) => w.id === key || w.url === key);
  const worker = matches.find((w) => w.state !== "down") ?? matches[0];
  const region = worker && regionNamed(config, worker.region);
  if (!worker || !region) throw ApiError.notFound(`No GPU worker "${key}" in any pool`);
  const pool = poolStub(env, region);
  const args = { region: region.name, staticUrls: region.workers, timeoutMs: config.heartbeatTimeoutMs };
  await pool.setDrain({ ...args, worker: worker.url, drain: "draining" });
  invalidatePoolView();
  log("worker drain started", { request: requestId, worker: worker.id, url: worker.url });
  let drained: Awaited<ReturnType<ReturnType<typeof workerClient>["drain"]>>;
  try {
    const headers = await capabilityHeaders(
      config.idSecret,
      config.workerIds.get(worker.url) ?? worker.id,
      workerScope("drain"),
    );
    drained = await workerClient(worker.url, config.workerToken).drain({}, { timeoutMs: DRAIN_TIMEOUT_MS, headers });
  } catch (error) {
    throw rpcErrorToApiError(error);
  }
  let moved = 0;
  for (const session of drained.sessions) {
    const placed = await placeNewSession(env, config, { exclude: [worker.url], moving: true });
    if (!placed) break;
    const epoch = await env.SESSIONS.getByName(session.sessionId).handOver({
      tenant: session.tenantId,
      fromUrl: worker.url,
      workerUrl: placed.worker.url,
    });
    if (epoch !== null) moved++;
  }
  await pool.setDrain({ ...args, worker: worker.url, drain: "drained" });
  invalidatePoolView();
  const report: DrainReport = {
    worker: { id: worker.id, url: worker.url, region: region.name },
    state: "drained",
    handed_over: drained.sessions.length,
    checkpointed: drained.sessions.filter((s) => s.checkpointed).length,
    moved,
    resident_sessions: drained.residentSessions,
  };
  log("worker drained", { request: requestId, worker: worker.id, moved, resident: drained.residentSessions });
  return report;
}
