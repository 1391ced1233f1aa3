/**
 * GET /v1/models and GET /v1/models/:id, from the configured MODEL_IDS. With `client_version` (Codex
 * CLI's catalog request) the list is Codex's catalog of the served model instead (codex-catalog.ts).
 */

import type { EdgeConfig } from "../config/config.ts";
import { ApiError } from "../core/errors.ts";
import { jsonResponse } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { authenticate } from "../tenancy/auth.ts";
import { askPoolHealth } from "../turn/pool-health.ts";
import { codexCatalog, servedModel } from "./responses/codex-catalog.ts";

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

export async function handleListModels(request: Request, rc: RequestContext<PoolBindings>): Promise<Response> {
  await authenticate(request.headers, rc.config.apiKeys);
  if (new URL(request.url).searchParams.has("client_version")) return codexModels(rc.env, rc.config);
  const ids = rc.config.modelIds;
  return jsonResponse({
    object: "list",
    data: ids.map(model),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids.at(-1) ?? null,
  });
}

async function codexModels(env: PoolBindings, config: EdgeConfig): Promise<Response> {
  const answers = await askPoolHealth(env, config);
  const ready = answers.flatMap((a) => ("health" in a && a.health.ready ? [a.health] : []));
  const served = servedModel(ready);
  if (!served) throw ApiError.overloaded("No worker is ready to describe the model; try again shortly");
  return jsonResponse(codexCatalog(config.modelIds, served));
}

export async function handleGetModel(request: Request, rc: RequestContext<unknown>, id: string): Promise<Response> {
  await authenticate(request.headers, rc.config.apiKeys);
  if (!rc.config.modelIds.includes(id)) throw ApiError.notFound(`model: ${id}`);
  return jsonResponse(model(id));
}
