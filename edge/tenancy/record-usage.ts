/** Reporting a finished turn's token usage to the tenant's UsageDO, off the response's path. */
import type { PromptProcessed, Stop } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { log } from "../core/log.ts";
import type { TurnUsage, UsageBindings } from "./usage-do.ts";

/** The usage of a finished turn from the worker's prompt and stop events. */
export function turnUsage(
  requestId: string,
  keyId: string,
  prompt: PromptProcessed,
  stop: Stop | undefined,
): TurnUsage {
  const cachedTokens = stop?.usage?.cachedTokens ?? prompt.cachedTokens;
  const prefilledTokens = stop?.usage?.inputTokens ?? Math.max(0, prompt.promptTokens - prompt.cachedTokens);
  return {
    requestId,
    keyId,
    inputTokens: cachedTokens + prefilledTokens,
    cachedTokens,
    prefilledTokens,
    outputTokens: stop?.usage?.outputTokens ?? 0,
    at: Date.now(),
  };
}

/** Count the turn in its tenant's UsageDO; a failure is logged, never the client's problem. */
export async function recordUsage(env: UsageBindings, tenant: string, usage: TurnUsage): Promise<void> {
  try {
    await env.USAGE.getByName(tenant).record(usage);
  } catch (error) {
    log("usage record failed", { request: usage.requestId, error: String(error) });
  }
}
