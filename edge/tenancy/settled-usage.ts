/** A turn's usage for its settlement with the tenant's authority, from the worker's prompt and stop events. */
import type { PromptProcessed, Stop } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { SettledUsage } from "./authority/authority-api.ts";

/**
 * A turn that stopped reports its exact usage in its stop event. One cut short (the client went away,
 * the worker failed after its prompt) is charged its prompt as the worker processed it and one token
 * per output event the edge received (each carries at least one sampled token).
 */
export function settledUsage(
  model: string,
  prompt: PromptProcessed,
  stop: Stop | undefined,
  stopped: boolean,
  outputEvents: number,
): SettledUsage {
  const cached = stop?.usage?.cachedTokens ?? prompt.cachedTokens;
  const prefilled = stop?.usage?.inputTokens ?? Math.max(0, prompt.promptTokens - prompt.cachedTokens);
  const output = stop?.usage ? stop.usage.outputTokens : outputEvents;
  return { model, prefilled, cached, output, partial: !stopped || !stop?.usage };
}
