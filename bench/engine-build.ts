/** Which llama.cpp build the bench's worker loaded (its Health answer), for the report's Software line. */
import { benchWorkerClient } from "./clients/worker-client.ts";

export async function workerEngineBuild(workerGrpcUrl: string): Promise<string> {
  try {
    const health = await benchWorkerClient(workerGrpcUrl).health({}, { timeoutMs: 5000 });
    return health.engineBuild || "unknown (the worker did not say)";
  } catch (error) {
    return `unknown (Health failed: ${error instanceof Error ? error.message : String(error)})`;
  }
}
