/**
 * The route table. Errors are rendered here in the shape of the route's protocol: OpenAI's under
 * /v1/responses, Anthropic's elsewhere (itty's `error()` puts the status in the body).
 */
import { type IRequest, Router } from "itty-router";
import { anthropicErrorResponse } from "./anthropic/errors.ts";
import type { RequestContext } from "./context.ts";
import { ApiError, toApiError } from "./errors.ts";
import { handleCountTokens } from "./handlers/count-tokens.ts";
import { handleHealth } from "./handlers/health.ts";
import { handleMessages } from "./handlers/messages.ts";
import { handleGetModel, handleListModels } from "./handlers/models.ts";
import { handleDrainWorker, handleListWorkers, handlePoolHeartbeat } from "./handlers/pool.ts";
import { handleDeleteResponse, handleGetResponse } from "./handlers/response-records.ts";
import { handleCreateResponse } from "./handlers/responses.ts";
import { openAiErrorResponse } from "./openai/errors.ts";
import { tenantLimited } from "./tenant-admission.ts";

type Args = [RequestContext];

const notAllowed = (allow: string) => () => {
  throw ApiError.methodNotAllowed(allow);
};

export const router = Router<IRequest, Args>({
  catch: (error: unknown, request: IRequest, rc: RequestContext) =>
    renderError(
      toApiError(error, { requestId: rc.requestId, path: new URL(request.url).pathname }),
      request,
      rc.requestId,
    ),
});

/** The error response in the shape of the protocol the path belongs to. */
export function renderError(error: ApiError, request: Request, requestId: string): Response {
  const openAi = new URL(request.url).pathname.startsWith("/v1/responses");
  return openAi ? openAiErrorResponse(error, requestId) : anthropicErrorResponse(error, requestId);
}

router
  .head("/", () => new Response(null, { status: 200 }))
  .get(
    "/",
    () =>
      new Response("Frontier: Anthropic Messages API and OpenAI Responses API\n", {
        headers: { "content-type": "text/plain" },
      }),
  )
  .all("/", notAllowed("GET, HEAD"))
  .get("/healthz", (_request, rc) => handleHealth(rc))
  .all("/healthz", notAllowed("GET"))
  .post("/v1/messages", tenantLimited(handleMessages))
  .all("/v1/messages", notAllowed("POST"))
  .post("/v1/messages/count_tokens", tenantLimited(handleCountTokens))
  .all("/v1/messages/count_tokens", notAllowed("POST"))
  .get("/v1/models", (request, rc) => handleListModels(request, rc))
  .all("/v1/models", notAllowed("GET"))
  .get("/v1/models/:id", (request, rc) => handleGetModel(request, rc, request.params.id ?? ""))
  .all("/v1/models/:id", notAllowed("GET"))
  .post("/internal/pool/heartbeat", (request, rc) => handlePoolHeartbeat(request, rc))
  .all("/internal/pool/heartbeat", notAllowed("POST"))
  .get("/admin/workers", (request, rc) => handleListWorkers(request, rc))
  .all("/admin/workers", notAllowed("GET"))
  .post("/admin/workers/:id/drain", (request, rc) => handleDrainWorker(request, rc, request.params.id ?? ""))
  .all("/admin/workers/:id/drain", notAllowed("POST"))
  .post("/v1/responses", tenantLimited(handleCreateResponse))
  .all("/v1/responses", notAllowed("POST"))
  .get("/v1/responses/:id", (request, rc) => handleGetResponse(request, rc, request.params.id ?? ""))
  .delete("/v1/responses/:id", (request, rc) => handleDeleteResponse(request, rc, request.params.id ?? ""))
  .all("/v1/responses/:id", notAllowed("GET, DELETE"))
  .all("*", (request) => {
    throw ApiError.notFound(`Not found: ${request.method} ${new URL(request.url).pathname}`);
  });
