/**
 * The GPU worker process: loads one model into one context with N sequences and serves
 * WorkerService over h2c (gRPC) and HTTP/1.1 (gRPC-Web for the edge).
 * Configuration comes from FRONTIER_* environment variables (see README).
 */
import { describeEngineBuild, type Engine } from "../native/engine-types.ts";
import type { CheckpointReplica } from "./checkpoints/replica/checkpoint-replica.ts";
import { S3CheckpointReplica } from "./checkpoints/replica/s3-replica.ts";
import { SessionCheckpoints } from "./checkpoints/session-checkpoints.ts";
import { CheckpointStore } from "./checkpoints/store/checkpoint-store.ts";
import { missingWorkerMemorySettings } from "./config/process-memory.ts";
import { advertisedUrl, loadConfig, type WorkerConfig } from "./config.ts";
import { SpanTokenMemory } from "./continuation/span-token-memory.ts";
import { TurnMemory } from "./continuation/turn-memory.ts";
import { log } from "./log.ts";
import { workerGauges } from "./metrics/gauges.ts";
import { MeteredCheckpointStorage, MeteredReplica } from "./metrics/metered-storage.ts";
import { type OpsServer, startOpsServer } from "./metrics/ops-server.ts";
import { type WorkerGauges, WorkerMetrics } from "./metrics/worker-metrics.ts";
import { loadModel } from "./model-load.ts";
import { DrainState } from "./pool/drain.ts";
import { type Heartbeat, startHeartbeat } from "./pool/heartbeat.ts";
import { PrefixAdvert } from "./pool/prefix-advert.ts";
import { heartbeatReport } from "./pool/report.ts";
import { drainThroughEdge } from "./pool/self-drain.ts";
import { startServer } from "./server.ts";
import { createWorkerService, workerHealth } from "./service.ts";
import { SessionTable } from "./session/session-table.ts";
import { rememberTurn } from "./turn/record.ts";
import { SharedPrefixes } from "./turn/shared-prefix/shared-prefixes.ts";

async function main(): Promise<void> {
  const envConfig = loadConfig();
  const { engine, format, contextSize } = await loadModel(envConfig);
  const config: WorkerConfig = { ...envConfig, contextSize };
  const memory = new TurnMemory();
  const spans = new SpanTokenMemory();
  // Metrics are recorded only when the operations listener that exposes them is on.
  const metrics: WorkerMetrics | undefined = config.ops
    ? new WorkerMetrics(
        { modelName: engine.model.name, contextSize: config.contextSize },
        (): WorkerGauges => workerGauges(deps),
      )
    : undefined;
  const { store, replica, checkpoints } = openCheckpoints(config, engine, metrics, { memory, spans });
  const sessions = new SessionTable(engine, checkpoints, {
    maxQueue: config.maxQueue,
    maxQueuePerTenant: config.maxQueuePerTenant,
    tenantMaxSequences: config.tenantMaxSequences,
    checkpointDelayMs: config.checkpointDelayMs,
  });
  const shared = sharedPrefixes(config, engine);
  const prefixes = new PrefixAdvert({
    isResident: (tenant, sessionId) => sessions.isResident(tenant, sessionId),
    hasCheckpoint: store && ((id) => store.has(id)),
  });
  if (checkpoints) {
    checkpoints.onStored = (key, meta, tokens, owner) => {
      shared?.holdCheckpoint(key, meta, tokens);
      prefixes.holdCheckpoint(meta.id, meta.tenant, meta.sessionId, meta.reason, owner);
    };
  }
  const drain = new DrainState();
  const deps = { engine, format, sessions, memory, spans, checkpoints, config, drain, prefixes, metrics, shared };
  const service = createWorkerService(deps);
  const server = await startServer(service, config);
  const ops: OpsServer | undefined =
    config.ops && metrics ? await startOpsServer(config.ops, metrics, () => workerHealth(deps)) : undefined;
  const advertiseUrl = advertisedUrl(config, server.httpPort);
  const heartbeat: Heartbeat | undefined = config.edgeUrl
    ? startHeartbeat({ edgeUrl: config.edgeUrl, token: config.poolToken, intervalMs: config.heartbeatMs }, () =>
        heartbeatReport(deps, advertiseUrl),
      )
    : undefined;
  log("worker ready", {
    worker: config.workerId,
    node: process.version,
    model: engine.model.name,
    engine: describeEngineBuild(engine.model.build),
    format: format.name,
    grpc: `${config.host}:${server.grpcPort}`,
    http: `${config.host}:${server.httpPort}`,
    ops: ops && config.ops ? `${config.ops.host}:${ops.port}` : "off",
    sequences: config.sequences,
    context: config.contextSize,
    kv: config.kvCacheType,
    threads: config.threads,
    prefixCopy: engine.prefixCopy.method,
    prefixCopyStateBelow: engine.prefixCopy.stateRestoreBelow || undefined,
    sequenceCopyUnavailable: engine.prefixCopy.sequenceCopyUnavailable,
    sharedPrefix: shared ? `blocks of ${config.sharedPrefix.blockTokens}` : "off",
    publicPrefixes: shared ? shared.publicPrefixes.size : undefined,
    checkpoints: store ? `${store.stats().count} in ${config.checkpointDir}` : "off",
    checkpointReplica: store ? replica?.description : undefined,
    pool: config.edgeUrl ? `${config.region} via ${config.edgeUrl} as ${advertiseUrl}` : "static",
    testPolicy: config.testPolicy,
    memorySettingsMissing: missingWorkerMemorySettings(process.env, process.execArgv).join(",") || undefined,
  });
  // Machine-readable readiness line for the scripts that start the stack.
  process.stdout.write(
    `${JSON.stringify({ ready: true, grpcPort: server.grpcPort, httpPort: server.httpPort, opsPort: ops?.port })}\n`,
  );
  stopOnSignals(async () => {
    // A pooled worker drains itself through the edge first (its own credential), so its sessions move.
    if (config.edgeUrl) {
      const { edgeUrl, poolToken: token, workerId, region } = config;
      await drainThroughEdge({ edgeUrl, token, workerId, region, timeoutMs: SELF_DRAIN_TIMEOUT_MS });
    }
    await heartbeat?.stop(true);
    await server.close();
    await ops?.close();
    const saved = await sessions.saveAll();
    log("sessions saved", { count: saved });
    await sessions.settled();
    sessions.close();
    shared?.dispose();
    store?.close();
    await engine.dispose();
  });
}

/** The checkpoint store (off with a zero budget), its replica, and the worker's use of them. */
function openCheckpoints(
  config: WorkerConfig,
  engine: Engine,
  metrics: WorkerMetrics | undefined,
  memories: { memory: TurnMemory; spans: SpanTokenMemory },
): {
  store: CheckpointStore | undefined;
  replica: CheckpointReplica | undefined;
  checkpoints: SessionCheckpoints | undefined;
} {
  const s3 = config.checkpointS3 ? new S3CheckpointReplica(config.checkpointS3) : undefined;
  const replica = s3 && metrics ? new MeteredReplica(s3, metrics) : s3;
  const store =
    config.checkpointBudgetBytes > 0
      ? CheckpointStore.open({
          dir: config.checkpointDir,
          shared: config.checkpointDirShared,
          budgetBytes: config.checkpointBudgetBytes,
          tenantShareBytes: config.checkpointTenantShareBytes,
          plainCacheBytes: config.checkpointPlainCacheBytes,
          modelIdentity: engine.model.identity,
          replica,
          ...(config.checkpointScratchDir ? { scratchDir: config.checkpointScratchDir } : {}),
        })
      : undefined;
  const checkpoints = store
    ? new SessionCheckpoints(
        metrics ? new MeteredCheckpointStorage(store, metrics) : store,
        { anchorMinTokens: config.anchorMinTokens },
        (tenant, turn) => rememberTurn(memories, tenant, turn),
        memories.memory,
      )
    : undefined;
  return { store, replica, checkpoints };
}

/** The shared-prefix index (fed by every checkpoint written, in main) and public prefixes, unless turned off. */
function sharedPrefixes(config: WorkerConfig, engine: Engine): SharedPrefixes | undefined {
  if (!config.sharedPrefix.enabled) return undefined;
  return new SharedPrefixes(config.sharedPrefix, engine.model.identity, config.checkpointScratchDir);
}

/** The self-drain's bound: under the deploy files' 600 s stop grace, leaving time for the final save. */
const SELF_DRAIN_TIMEOUT_MS = 480_000;

/** On SIGINT or SIGTERM (once): log, run `shutdown`, exit. */
function stopOnSignals(shutdown: () => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log("worker stopping", { signal });
    await shutdown();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error: unknown) => {
  log("worker failed to start", { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
