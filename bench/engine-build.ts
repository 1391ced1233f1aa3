/** Which llama.cpp build the bench's worker loaded (its Health answer), for the report's Software line. */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { WorkerService } from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import { workerAuth } from "./routing-overhead.ts";

export async function workerEngineBuild(workerGrpcUrl: string): Promise<string> {
  try {
    const client = createClient(
      WorkerService,
      createGrpcTransport({ baseUrl: workerGrpcUrl, interceptors: [workerAuth] }),
    );
    const health = await client.health({}, { timeoutMs: 5000 });
    return health.engineBuild || "unknown (the worker did not say)";
  } catch (error) {
    return `unknown (Health failed: ${error instanceof Error ? error.message : String(error)})`;
  }
}
