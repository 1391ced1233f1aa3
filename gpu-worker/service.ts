import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { describeEngineBuild } from "../native/engine-types.ts";
import {
  type GenerateEvent,
  type GenerateRequest,
  WorkerErrorCode,
  type WorkerService,
} from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import { NO_SCOPE } from "../shared/capability.ts";
import { prefixFingerprint } from "../shared/prefix-fingerprint.ts";
import { type CapabilityVerifier, requireCapability } from "./capability-check.ts";
import { formatCapabilities } from "./chat/format-capabilities.ts";
import { WorkerFailure } from "./errors.ts";
import { generateEvent } from "./generate/events.ts";
import { log } from "./log.ts";
import type { DrainState } from "./pool/drain.ts";
import type { PrefixSet } from "./pool/prefix-set.ts";
import { countPromptTokens } from "./turn/count-tokens.ts";
import { runTurn } from "./turn/run-turn.ts";
import { withKeepAlive } from "./turn/stream-keep-alive.ts";
import type { TurnDeps } from "./turn/turn.ts";
import { limitTurn, turnLimitsOf, turnTimeLimitEvent } from "./turn/turn-limits.ts";

/** What the service needs besides the turn runner's dependencies: pool membership state. */
export interface WorkerDeps extends TurnDeps {
  drain: DrainState;
  /** Prompt prefixes this worker holds (reported in heartbeats for placement). */
  prefixes: PrefixSet;
}

/** What this worker checks each call's capability with (its own key and id). */
function verifierOf(deps: WorkerDeps): CapabilityVerifier {
  return { key: deps.config.capabilityKey, workerId: deps.config.workerId };
}

/** The WorkerService implementation: thin glue from RPCs to the turn runner and session table. */
export function createWorkerService(deps: WorkerDeps): ServiceImpl<typeof WorkerService> {
  return {
    async *generate(request, context): AsyncGenerator<GenerateEvent> {
      const scope = { op: "generate", tenant: request.tenantId, session: request.sessionId } as const;
      requireCapability(verifierOf(deps), context.requestHeader, scope);
      // Sent at once: the response headers go out with the first event, so the edge can tell a
      // worker that died while running this request (never retried elsewhere) from one it never reached.
      yield generateEvent({ case: "keepAlive", value: { prefilledTokens: 0, totalTokens: 0 } });
      try {
        await admit(deps, request.tenantId, request.sessionId, Number(request.epoch));
        // The edge fingerprints each request's prefix once and sends it; a caller that doesn't (a
        // direct gRPC client) is fingerprinted here.
        const prefix = request.prefixFingerprint || (await fingerprintOf(request));
        if (prefix) deps.prefixes.add(prefix);
        // Never silent past the keep-alive interval (queued, restoring, planning): the edge's idle deadline.
        const turn = limitTurn(
          (signal) => runTurn(deps, request, signal),
          context.signal,
          turnLimitsOf(deps.config),
          () => turnTimeLimitEvent(deps.config.turnWallClockMs, request.requestId),
          request.requestId,
        );
        yield* withKeepAlive(turn, deps.config.keepAliveMs);
      } catch (error) {
        if (context.signal.aborted) {
          log("request cancelled", { request: request.requestId });
          return;
        }
        yield errorEvent(error, request.requestId);
      }
    },

    async countTokens(request, context) {
      const scope = { op: "count_tokens", tenant: request.tenantId, session: NO_SCOPE } as const;
      requireCapability(verifierOf(deps), context.requestHeader, scope);
      if (!request.conversation || request.conversation.messages.length === 0) {
        throw new ConnectError("messages: at least one message is required", Code.InvalidArgument);
      }
      try {
        return { inputTokens: await countPromptTokens(deps, request.conversation, request.ownServerCallIds) };
      } catch (error) {
        if (error instanceof WorkerFailure && isClientError(error.code)) {
          throw new ConnectError(error.message, Code.InvalidArgument);
        }
        throw error;
      }
    },

    async health(_request, context) {
      requireCapability(verifierOf(deps), context.requestHeader, { op: "health", tenant: NO_SCOPE, session: NO_SCOPE });
      return {
        ...workerHealth(deps),
        modelIdentity: deps.engine.model.identity,
        contextSize: deps.config.contextSize,
        engineBuild: describeEngineBuild(deps.engine.model.build),
        ...formatCapabilities(deps.format),
      };
    },

    async stats(_request, context) {
      requireCapability(verifierOf(deps), context.requestHeader, { op: "stats", tenant: NO_SCOPE, session: NO_SCOPE });
      const engineStats = deps.engine.stats();
      const sessions = deps.sessions.stats();
      const store = deps.checkpoints?.store.stats();
      return {
        sequencesTotal: engineStats.sequencesTotal,
        sequencesFree: engineStats.sequencesFree,
        liveSessions: sessions.resident,
        activeRequests: sessions.active,
        queuedRequests: sessions.queued,
        parkedSessions: sessions.parked,
        checkpoints: store?.count ?? 0,
        checkpointBytes: BigInt(store?.bytes ?? 0),
        checkpointHits: BigInt(store?.hits ?? 0),
        checkpointMisses: BigInt(store?.misses ?? 0),
      };
    },

    async releaseSession(request, context) {
      const scope = { op: "release_session", tenant: request.tenantId, session: request.sessionId } as const;
      requireCapability(verifierOf(deps), context.requestHeader, scope);
      return { released: deps.sessions.drop(request.tenantId, request.sessionId) };
    },

    async drain(_request, context) {
      requireCapability(verifierOf(deps), context.requestHeader, { op: "drain", tenant: NO_SCOPE, session: NO_SCOPE });
      return deps.drain.drain(deps.sessions);
    },
  };
}

/** The Health RPC's answer (also the operations listener's /readyz): not ready while draining. */
export function workerHealth(deps: Pick<WorkerDeps, "drain" | "config" | "engine">): {
  ready: boolean;
  workerId: string;
  modelName: string;
} {
  return { ready: !deps.drain.draining, workerId: deps.config.workerId, modelName: deps.engine.model.name };
}

/**
 * Refuse a turn this worker must not run: while draining (after handing the session over, so the
 * worker that takes it finds its checkpoint), or with an epoch older than one already served.
 */
async function admit(deps: WorkerDeps, tenant: string, sessionId: string, epoch: number): Promise<void> {
  if (deps.drain.draining) {
    await deps.sessions.handOver(tenant, sessionId);
    throw WorkerFailure.draining();
  }
  if (deps.sessions.admitEpoch(tenant, sessionId, epoch) === "stale") throw WorkerFailure.staleEpoch(epoch);
}

function errorEvent(error: unknown, requestId: string): GenerateEvent {
  if (error instanceof WorkerFailure) {
    log("request failed", { request: requestId, code: WorkerErrorCode[error.code], message: error.message });
    return generateEvent({ case: "error", value: { code: error.code, message: error.message, param: error.param } });
  }
  const message = error instanceof Error ? error.message : String(error);
  log("request failed", { request: requestId, code: "INTERNAL", message });
  return generateEvent({
    case: "error",
    value: { code: WorkerErrorCode.INTERNAL, message: "internal error in the GPU worker", param: "" },
  });
}

function isClientError(code: WorkerErrorCode): boolean {
  return code === WorkerErrorCode.INVALID_REQUEST || code === WorkerErrorCode.CONTEXT_TOO_LONG;
}

async function fingerprintOf(request: GenerateRequest): Promise<string | undefined> {
  return request.conversation ? prefixFingerprint(request.tenantId, request.conversation) : undefined;
}
