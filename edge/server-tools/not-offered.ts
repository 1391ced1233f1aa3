/**
 * `x-frontier-tools-not-offered`: the declared tools the model was not offered — hosted tool types
 * Frontier never runs (named by the edge) and web_search / web_fetch where the worker has no
 * provider (named by the worker in its cache decision). Never silently dropped.
 */
import type { PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

const NOT_OFFERED_HEADER = "x-frontier-tools-not-offered";

/** The header's tool types: the edge's list, then the worker's, without repeats. */
export function notOfferedTools(edgeList: readonly string[], prompt: PromptProcessed | undefined): string[] {
  const all = [...edgeList, ...(prompt?.serverToolsNotOffered ?? [])];
  return all.filter((type, i) => type !== "" && all.indexOf(type) === i);
}

/** Headers with the not-offered list (the edge's and the worker's decision's), when there is one. */
export function withNotOffered(
  headers: Record<string, string>,
  edgeList: readonly string[],
  prompt: PromptProcessed | undefined,
): Record<string, string> {
  const tools = notOfferedTools(edgeList, prompt);
  if (tools.length === 0) return headers;
  return { ...headers, [NOT_OFFERED_HEADER]: tools.join(", ") };
}
