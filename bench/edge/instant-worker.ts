/**
 * The worker's own gRPC server with an instant Generate (prompt → "pong" → stop, no model): what an
 * edge benchmark puts behind the edge so that only the edge's time varies. Only Generate is
 * implemented (static WORKER_URLS, no pool): connect answers Unimplemented to the rest. It is
 * `INSTANT_WORKER_ID` with the development capability key: the edge needs WORKER_IDS naming it.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { DEV_WORKER_TOKEN, loadConfig } from "../../gpu-worker/config.ts";
import { startServer } from "../../gpu-worker/server.ts";
import { CacheDecision, StopReason, type WorkerService } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

const instantWorker: Partial<ServiceImpl<typeof WorkerService>> = {
  async *generate() {
    yield {
      event: {
        case: "prompt",
        value: { promptTokens: 9, messageId: "msg_instant", decision: CacheDecision.LIVE_TEXT_PREFIX },
      },
    };
    yield { event: { case: "textDelta", value: { text: "pong" } } };
    yield {
      event: {
        case: "stop",
        value: { reason: StopReason.END_TURN, usage: { inputTokens: 1, cachedTokens: 8, outputTokens: 1 } },
      },
    };
  },
};

export const INSTANT_WORKER_ID = "worker-1";

export function startInstantWorker() {
  const { capabilityKey } = loadConfig({ FRONTIER_DEV: "1", FRONTIER_WORKER_ID: INSTANT_WORKER_ID });
  return startServer(instantWorker as ServiceImpl<typeof WorkerService>, {
    host: "127.0.0.1",
    grpcPort: 0,
    httpPort: 0,
    workerToken: DEV_WORKER_TOKEN,
    capabilityKey,
    workerId: INSTANT_WORKER_ID,
  });
}
