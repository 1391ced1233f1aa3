/** A Connect client for a worker's h2c gRPC listener, carrying the shared worker token (the dev default unless set). */
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { DEV_WORKER_TOKEN } from "../gpu-worker/config.ts";
import { WorkerService } from "../proto/gen/frontier/worker/v1/worker_pb.ts";

const workerAuth: Interceptor = (next) => (request) => {
  request.header.set("authorization", `Bearer ${process.env.FRONTIER_WORKER_TOKEN || DEV_WORKER_TOKEN}`);
  return next(request);
};

export function benchWorkerClient(grpcUrl: string) {
  return createClient(WorkerService, createGrpcTransport({ baseUrl: grpcUrl, interceptors: [workerAuth] }));
}
