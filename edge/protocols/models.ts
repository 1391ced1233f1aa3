/**
 * GET /v1/models and GET /v1/models/:id, from the configured MODEL_IDS that the caller's key may use
 * (its tenant's and its own allow-lists, as its authority answers). With `client_version` (Codex
 * CLI's catalog request) the list is Codex's catalog of the served model instead (codex-catalog.ts).
 */

import { ApiError } from "../core/errors.ts";
import { jsonResponse } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { authorize } from "../tenancy/admission.ts";
import { identifyCaller } from "../tenancy/auth.ts";
import { modelAllowed } from "../tenancy/authority/policy.ts";
import type { TenantAuthorityBindings } from "../tenancy/authority/tenant-authority-do.ts";
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

export async function handleListModels(
  request: Request,
  rc: RequestContext<PoolBindings & TenantAuthorityBindings>,
): Promise<Response> {
  const allowed = await authorize(rc, await identifyCaller(request.headers, rc.config));
  const ids = rc.config.modelIds.filter((id) => modelAllowed(allowed, id));
  if (new URL(request.url).searchParams.has("client_version")) return codexModels(rc, ids);
  return jsonResponse({
    object: "list",
    data: ids.map(model),
    has_more: false,
    first_id: ids[0] ?? null,
    last_id: ids.at(-1) ?? null,
  });
}

async function codexModels(rc: RequestContext<PoolBindings>, ids: string[]): Promise<Response> {
  const answers = await askPoolHealth(rc.env, rc.config);
  const ready = answers.flatMap((a) => ("health" in a && a.health.ready ? [a.health] : []));
  const served = servedModel(ready);
  if (!served) throw ApiError.overloaded("No worker is ready to describe the model; try again shortly");
  return jsonResponse(codexCatalog(ids, served));
}

export async function handleGetModel(
  request: Request,
  rc: RequestContext<TenantAuthorityBindings>,
  id: string,
): Promise<Response> {
  const allowed = await authorize(rc, await identifyCaller(request.headers, rc.config));
  if (!rc.config.modelIds.includes(id) || !modelAllowed(allowed, id)) {
    throw new ApiError("not_found_error", `model: ${id}`, { param: "model", code: "model_not_found" });
  }
  return jsonResponse(model(id));
}
