/**
 * Codex CLI's model catalog: `GET /v1/models?client_version=…`, which Codex asks for when its
 * provider's key comes from an `auth` command (a key from `env_key` never fetches it), and whose
 * body `model_catalog_json` also takes as a file. Its shape is Codex's `ModelsResponse`
 * (`{models: [ModelInfo]}`); without an entry for the model Codex warns "Model metadata for `…` not
 * found" and guesses (272k context, images accepted, no reasoning levels).
 *
 * Every value comes from the workers serving the pool, via Health: the context window is the
 * smallest worker context, the reasoning levels are Frontier's `reasoning.effort` budgets when the
 * chat format turns thinking on and off per request (none when it cannot), parallel calls when every
 * worker's format makes more than one call per generation, input is text only (Frontier refuses
 * images). The rest is what Codex uses for an unknown model, so describing the model leaves Codex's
 * tools and prompt as they were.
 */
import type { HealthResponse } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CODEX_DEFAULT_INSTRUCTIONS } from "./codex-default-instructions.ts";
import { THINKING_BUDGETS } from "./request/normalize.ts";

/** The pool's model as its ready workers describe it. */
export interface ServedModel {
  contextWindow: number;
  chatFormats: string[];
  thinkingToggle: boolean;
  parallelToolCalls: boolean;
}

/** What the ready workers have in common (null: none is ready). */
export function servedModel(ready: readonly HealthResponse[]): ServedModel | null {
  if (ready.length === 0) return null;
  return {
    contextWindow: Math.min(...ready.map((h) => h.contextSize)),
    chatFormats: [...new Set(ready.map((h) => h.chatFormat))].sort(),
    thinkingToggle: ready.every((h) => h.thinkingToggle),
    parallelToolCalls: ready.every((h) => h.maxCallsPerTurn > 1),
  };
}

function reasoningLevels(model: ServedModel) {
  if (!model.thinkingToggle) return [];
  const budgets = Object.entries(THINKING_BUDGETS).map(([effort, budget]) => ({
    effort,
    description: `Thinking on, up to ${budget} tokens`,
  }));
  return [{ effort: "none", description: "Thinking off" }, ...budgets];
}

/** One `ModelInfo` (codex-rs `codex_protocol::openai_models::ModelInfo`). */
function codexModelInfo(id: string, priority: number, model: ServedModel) {
  return {
    slug: id,
    display_name: id,
    description: `Served by Frontier (${model.chatFormats.join(", ")} chat format, ${model.contextWindow}-token context)`,
    // No effort sent is thinking off, as before: Codex sends one only when a level is chosen.
    default_reasoning_level: null,
    supported_reasoning_levels: reasoningLevels(model),
    shell_type: "default",
    visibility: "list",
    supported_in_api: true,
    priority,
    upgrade: null,
    base_instructions: CODEX_DEFAULT_INSTRUCTIONS,
    supports_reasoning_summaries: false,
    default_reasoning_summary: "none",
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: null,
    web_search_tool_type: "text",
    truncation_policy: { mode: "bytes", limit: 10_000 },
    supports_parallel_tool_calls: model.parallelToolCalls,
    context_window: model.contextWindow,
    max_context_window: model.contextWindow,
    effective_context_window_percent: 95,
    experimental_supported_tools: [],
    input_modalities: ["text"],
  };
}

export function codexCatalog(modelIds: readonly string[], model: ServedModel) {
  return { models: modelIds.map((id, index) => codexModelInfo(id, index + 1, model)) };
}
