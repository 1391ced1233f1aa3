/** GET /v1/models and GET /v1/models/:id, from the configured MODEL_IDS. */

import { ApiError } from "../core/errors.ts";
import { jsonResponse } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../tenancy/auth.ts";

/** A fixed timestamp: the models are whatever the workers serve, not dated releases. */
const CREATED_AT = "2026-01-01T00:00:00Z";

/** Anthropic's model shape plus OpenAI's fields (`object`, `created`, `owned_by`), so both SDKs read it. */
function model(id: string) {
  return {
    type: "model",
    id,
    display_name: id,
    created_at: CREATED_AT,
    object: "model",
    created: Date.parse(CREATED_AT) / 1000,
    owned_by: "frontier",
  };
}

/**
 * Codex's model metadata (its `ModelInfo`, read from `models` of `GET {base_url}/models?client_version=…`):
 * which shell and patch tools, reasoning levels and parallel calls a model takes. Codex asks only
 * with provider command auth (`[model_providers.x.auth]`) or a ChatGPT login, never with a plain API
 * key; it ignores the list's other keys, and other clients ignore `models`. No `context_window`: the
 * edge does not know the workers' context (Codex keeps its own default).
 */
const CODEX_BASE_INSTRUCTIONS = [
  "You are a coding agent working in the user's workspace through the tools you are given.",
  "Read before you change things, make the smallest change that does the job, run the checks the project has,",
  "and say plainly what you did, what you could not do, and why. Ask before anything destructive.",
].join(" ");

function codexModel(id: string) {
  return {
    slug: id,
    display_name: id,
    description: "Served by Frontier",
    default_reasoning_level: "medium",
    supported_reasoning_levels: (["low", "medium", "high"] as const).map((effort) => ({ effort, description: effort })),
    // What Codex sends Frontier today: exec_command / write_stdin, freeform apply_patch (custom tool).
    shell_type: "unified_exec",
    visibility: "list",
    supported_in_api: true,
    priority: 1,
    upgrade: null,
    // Required by Codex, and used in place of its bundled prompt once it has this metadata.
    base_instructions: CODEX_BASE_INSTRUCTIONS,
    supports_reasoning_summaries: true,
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: "freeform",
    truncation_policy: { mode: "bytes", limit: 10_000 },
    supports_parallel_tool_calls: true,
    experimental_supported_tools: [],
    input_modalities: ["text"],
  };
}

export async function handleListModels(request: Request, rc: RequestContext<unknown>): Promise<Response> {
  await authenticate(request.headers, rc.config.apiKeys);
  const ids = rc.config.modelIds;
  return jsonResponse({
    object: "list",
    data: ids.map(model),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids.at(-1) ?? null,
    models: ids.map(codexModel),
  });
}

export async function handleGetModel(request: Request, rc: RequestContext<unknown>, id: string): Promise<Response> {
  await authenticate(request.headers, rc.config.apiKeys);
  if (!rc.config.modelIds.includes(id)) throw ApiError.notFound(`model: ${id}`);
  return jsonResponse(model(id));
}
