/**
 * `GET /v1beta/models` and `GET /v1beta/models/{model}`: the configured MODEL_IDS as Gemini `Model`
 * resources (`name: "models/<id>"`). The token limits are what the pool serves: the smallest ready
 * worker's context (left out when no worker answers), and Frontier's output cap.
 */
import { LIMITS } from "../../../shared/limits.ts";
import type { EdgeConfig } from "../../config/config.ts";
import { ApiError } from "../../core/errors.ts";
import { jsonResponse } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import type { PoolBindings } from "../../pool/pool-do.ts";
import { authorize } from "../../tenancy/admission.ts";
import { modelAllowed } from "../../tenancy/authority/policy.ts";
import type { TenantAuthorityBindings } from "../../tenancy/authority/tenant-authority-do.ts";
import { askPoolHealth } from "../../turn/pool-health.ts";
import { identifyGeminiCaller } from "./auth.ts";
import { decodeSegment } from "./routes.ts";

const METHODS = ["generateContent", "streamGenerateContent", "countTokens"];

function model(id: string, contextSize: number | undefined) {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version: "001",
    displayName: id,
    description: "Served by Frontier",
    ...(contextSize === undefined ? {} : { inputTokenLimit: contextSize }),
    outputTokenLimit: LIMITS.maxOutputTokens,
    supportedGenerationMethods: METHODS,
    temperature: 1,
    maxTemperature: 2,
    topP: 1,
    thinking: true,
  };
}

async function contextSize(env: PoolBindings, config: EdgeConfig): Promise<number | undefined> {
  const sizes = (await askPoolHealth(env, config)).flatMap((a) =>
    "health" in a && a.health.ready ? [a.health.contextSize] : [],
  );
  return sizes.length === 0 ? undefined : Math.min(...sizes);
}

/** The models the caller's key may use (its tenant's and its own allow-lists, as its authority answers). */
async function allowedIds(request: Request, rc: RequestContext<TenantAuthorityBindings>): Promise<string[]> {
  const allowed = await authorize(rc, await identifyGeminiCaller(request, rc.config));
  return rc.config.modelIds.filter((id) => modelAllowed(allowed, id));
}

export async function handleGeminiListModels(
  request: Request,
  rc: RequestContext<PoolBindings & TenantAuthorityBindings>,
): Promise<Response> {
  const ids = await allowedIds(request, rc);
  const size = await contextSize(rc.env, rc.config);
  return jsonResponse({ models: ids.map((id) => model(id, size)) });
}

export async function handleGeminiGetModel(
  request: Request,
  rc: RequestContext<PoolBindings & TenantAuthorityBindings>,
  id: string,
): Promise<Response> {
  const ids = await allowedIds(request, rc);
  const name = decodeSegment(id);
  if (!ids.includes(name)) throw ApiError.notFound(`models/${name} is not found`);
  return jsonResponse(model(name, await contextSize(rc.env, rc.config)));
}
