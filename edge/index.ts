/**
 * Frontier's edge: a Worker serving the Anthropic Messages, OpenAI Responses and Chat Completions
 * and Gemini APIs and forwarding turns to the GPU workers over gRPC-Web. Every response carries a
 * `request-id`. Below the handler, the route table (itty-router); errors are rendered in the shape
 * of the path's protocol (protocols/error-shape.ts).
 */

import { type IRequest, Router } from "itty-router";
import { handleHealth } from "./admin/health.ts";
import { handleMetrics } from "./admin/metrics.ts";
import { handleDrainWorker, handleListWorkers, handlePoolHeartbeat, handlePoolSelfDrain } from "./admin/pool-routes.ts";
import { handleCostReport, handleUsageReport } from "./admin/reports/report-routes.ts";
import { handleStatusData, handleStatusPage } from "./admin/status.ts";
import { handleCreateAdminKey, handleListAdminKeys, handleRevokeAdminKey } from "./admin/tenants/admin-key-routes.ts";
import { handleListAudit, handleVerifyAudit } from "./admin/tenants/audit-routes.ts";
import {
  handleCreateKey,
  handleGetKey,
  handleListKeys,
  handleRevokeKey,
  handleRotateKey,
  handleUpdateKey,
} from "./admin/tenants/key-routes.ts";
import { handleGetPrices, handlePriceVersions, handleSetPrices } from "./admin/tenants/price-routes.ts";
import {
  handleArchiveTenant,
  handleCreateTenant,
  handleGetTenant,
  handleListTenants,
  handleUpdateTenant,
} from "./admin/tenants/tenant-routes.ts";
import { handleUsage } from "./admin/usage.ts";
import { handleIssueCredential, handleListCredentials, handleRevokeCredential } from "./admin/worker-credentials.ts";
import { loadConfig } from "./config/config.ts";
import { refuseDevOffLoopback } from "./config/dev-loopback.ts";
import { clock } from "./core/clock.ts";
import { ApiError, toApiError } from "./core/errors.ts";
import type { RateLimitSlot } from "./core/rate-limits.ts";
import { ResponseSent } from "./core/response-sent.ts";
import { EdgeTiming } from "./core/timing.ts";
import type { Env } from "./env.ts";
import { newRequestId } from "./http/body.ts";
import type { RequestContext } from "./http/context.ts";
import { recordRequest } from "./metrics/record.ts";
import { chatAdapter } from "./protocols/chat/adapter.ts";
import { isGeminiCaller, rateLimitHeaders, renderError } from "./protocols/error-shape.ts";
import { handleGeminiGetModel, handleGeminiListModels } from "./protocols/gemini/models.ts";
import { handleGeminiModelAction } from "./protocols/gemini/routes.ts";
import { handleKeyInfo } from "./protocols/key-info.ts";
import { messagesAdapter } from "./protocols/messages/adapter.ts";
import { handleCountTokens } from "./protocols/messages/count-tokens.ts";
import { handleGetModel, handleListModels } from "./protocols/models.ts";
import { responsesAdapter } from "./protocols/responses/adapter.ts";
import { handleCompact } from "./protocols/responses/compact/handler.ts";
import { handleInputTokens } from "./protocols/responses/input-tokens.ts";
import { handleDeleteResponse, handleGetResponse } from "./protocols/responses/records.ts";
import { handleResponsesSocket } from "./protocols/responses/socket/websocket.ts";
import { turnRoute } from "./turn/pipeline.ts";

export { EdgeMetricsDO } from "./metrics/edge-metrics-do.ts";
export { PoolDO } from "./pool/pool-do.ts";
export { ResponseStoreDO } from "./protocols/responses/response-store-do.ts";
export { SessionDO } from "./session/session-do.ts";
export { TenantAuthorityDO } from "./tenancy/authority/tenant-authority-do.ts";
export { RegistryDO } from "./tenancy/registry/registry-do.ts";
export { UsageDO } from "./tenancy/usage-do.ts";

export default {
  async fetch(request, env, ctx): Promise<Response> {
    const requestId = newRequestId();
    const started = Date.now();
    const sent = new ResponseSent((p) => ctx.waitUntil(p));
    const rateLimits: RateLimitSlot = {};
    let response: Response;
    try {
      const config = loadConfig(env);
      response = await router.fetch(request, {
        env,
        config,
        requestId,
        waitUntil: (p: Promise<unknown>) => ctx.waitUntil(p),
        timing: new EdgeTiming(started),
        sent,
        rateLimits,
      });
    } catch (error) {
      response = renderError(toApiError(error, { requestId, path: new URL(request.url).pathname }), request, requestId);
    }
    sent.returned();
    const { status } = response;
    const seconds = (Date.now() - started) / 1000;
    recordRequest(env, sent, request, status, seconds);
    const headers: Record<string, string> = { "request-id": requestId };
    if (rateLimits.snapshot) Object.assign(headers, rateLimitHeaders(request, rateLimits.snapshot, clock.now()));
    return withHeaders(response, headers);
  },
} satisfies ExportedHandler<Env>;

function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [name, value] of Object.entries(headers)) copy.headers.set(name, value);
    return copy;
  }
}

type Args = [RequestContext<Env>];

const notAllowed = (allow: string) => () => {
  throw ApiError.methodNotAllowed(allow);
};

const router = Router<IRequest, Args>({
  before: [(request, rc) => refuseDevOffLoopback(request, rc.config)],
  catch: (error: unknown, request: IRequest, rc: RequestContext<Env>) =>
    renderError(
      toApiError(error, { requestId: rc.requestId, path: new URL(request.url).pathname }),
      request,
      rc.requestId,
    ),
});

router
  .head("/", () => new Response(null, { status: 200 }))
  .get(
    "/",
    () =>
      new Response("Frontier: Anthropic Messages API, OpenAI Responses and Chat Completions APIs, Gemini API\n", {
        headers: { "content-type": "text/plain" },
      }),
  )
  .all("/", notAllowed("GET, HEAD"))
  .get("/healthz", (_request, rc) => handleHealth(rc))
  .all("/healthz", notAllowed("GET"))
  .post("/v1/messages", turnRoute(messagesAdapter))
  .all("/v1/messages", notAllowed("POST"))
  .post("/v1/messages/count_tokens", (request, rc) => handleCountTokens(request, rc))
  .all("/v1/messages/count_tokens", notAllowed("POST"))
  .get("/v1/models", (request, rc) =>
    isGeminiCaller(request) ? handleGeminiListModels(request, rc) : handleListModels(request, rc),
  )
  .all("/v1/models", notAllowed("GET"))
  .get("/v1/models/:id", (request, rc) =>
    isGeminiCaller(request)
      ? handleGeminiGetModel(request, rc, request.params.id ?? "")
      : handleGetModel(request, rc, request.params.id ?? ""),
  )
  .post("/v1/models/:action", (request, rc) => handleGeminiModelAction(request, rc, request.params.action ?? ""))
  .all("/v1/models/:id", notAllowed("GET"))
  .get("/v1/key", (request, rc) => handleKeyInfo(request, rc))
  .all("/v1/key", notAllowed("GET"))
  .post("/internal/pool/heartbeat", (request, rc) => handlePoolHeartbeat(request, rc))
  .all("/internal/pool/heartbeat", notAllowed("POST"))
  .post("/internal/pool/drain", (request, rc) => handlePoolSelfDrain(request, rc))
  .all("/internal/pool/drain", notAllowed("POST"))
  .get("/admin/workers", (request, rc) => handleListWorkers(request, rc))
  .all("/admin/workers", notAllowed("GET"))
  .post("/admin/workers/:id/drain", (request, rc) => handleDrainWorker(request, rc, request.params.id ?? ""))
  .all("/admin/workers/:id/drain", notAllowed("POST"))
  .get("/admin/worker-credentials", (request, rc) => handleListCredentials(request, rc))
  .post("/admin/worker-credentials", (request, rc) => handleIssueCredential(request, rc))
  .all("/admin/worker-credentials", notAllowed("GET, POST"))
  .delete("/admin/worker-credentials/:id", (request, rc) =>
    handleRevokeCredential(request, rc, request.params.id ?? ""),
  )
  .all("/admin/worker-credentials/:id", notAllowed("DELETE"))
  .get("/admin/tenants", (request, rc) => handleListTenants(request, rc))
  .post("/admin/tenants", (request, rc) => handleCreateTenant(request, rc))
  .all("/admin/tenants", notAllowed("GET, POST"))
  .post("/admin/tenants/:t/archive", (request, rc) => handleArchiveTenant(request, rc, request.params.t ?? ""))
  .all("/admin/tenants/:t/archive", notAllowed("POST"))
  .get("/admin/tenants/:t/keys", (request, rc) => handleListKeys(request, rc, request.params.t ?? ""))
  .post("/admin/tenants/:t/keys", (request, rc) => handleCreateKey(request, rc, request.params.t ?? ""))
  .all("/admin/tenants/:t/keys", notAllowed("GET, POST"))
  .post("/admin/tenants/:t/keys/:k/rotate", (request, rc) =>
    handleRotateKey(request, rc, request.params.t ?? "", request.params.k ?? ""),
  )
  .all("/admin/tenants/:t/keys/:k/rotate", notAllowed("POST"))
  .get("/admin/tenants/:t/keys/:k", (request, rc) =>
    handleGetKey(request, rc, request.params.t ?? "", request.params.k ?? ""),
  )
  .post("/admin/tenants/:t/keys/:k", (request, rc) =>
    handleUpdateKey(request, rc, request.params.t ?? "", request.params.k ?? ""),
  )
  .delete("/admin/tenants/:t/keys/:k", (request, rc) =>
    handleRevokeKey(request, rc, request.params.t ?? "", request.params.k ?? ""),
  )
  .all("/admin/tenants/:t/keys/:k", notAllowed("GET, POST, DELETE"))
  .get("/admin/tenants/:t", (request, rc) => handleGetTenant(request, rc, request.params.t ?? ""))
  .post("/admin/tenants/:t", (request, rc) => handleUpdateTenant(request, rc, request.params.t ?? ""))
  .all("/admin/tenants/:t", notAllowed("GET, POST"))
  .get("/admin/prices", (request, rc) => handleGetPrices(request, rc))
  .post("/admin/prices", (request, rc) => handleSetPrices(request, rc))
  .all("/admin/prices", notAllowed("GET, POST"))
  .get("/admin/prices/versions", (request, rc) => handlePriceVersions(request, rc))
  .all("/admin/prices/versions", notAllowed("GET"))
  .get("/admin/admin-keys", (request, rc) => handleListAdminKeys(request, rc))
  .post("/admin/admin-keys", (request, rc) => handleCreateAdminKey(request, rc))
  .all("/admin/admin-keys", notAllowed("GET, POST"))
  .delete("/admin/admin-keys/:id", (request, rc) => handleRevokeAdminKey(request, rc, request.params.id ?? ""))
  .all("/admin/admin-keys/:id", notAllowed("DELETE"))
  .get("/admin/usage_report", (request, rc) => handleUsageReport(request, rc))
  .all("/admin/usage_report", notAllowed("GET"))
  .get("/admin/cost_report", (request, rc) => handleCostReport(request, rc))
  .all("/admin/cost_report", notAllowed("GET"))
  .get("/admin/audit", (request, rc) => handleListAudit(request, rc))
  .all("/admin/audit", notAllowed("GET"))
  .get("/admin/audit/verify", (request, rc) => handleVerifyAudit(request, rc))
  .all("/admin/audit/verify", notAllowed("GET"))
  .get("/admin/usage", (request, rc) => handleUsage(request, rc))
  .all("/admin/usage", notAllowed("GET"))
  .get("/admin/metrics", (request, rc) => handleMetrics(request, rc))
  .all("/admin/metrics", notAllowed("GET"))
  .get("/admin/status", (request, rc) => handleStatusPage(request, rc))
  .all("/admin/status", notAllowed("GET"))
  .get("/admin/status.json", (request, rc) => handleStatusData(request, rc))
  .all("/admin/status.json", notAllowed("GET"))
  .post("/v1/chat/completions", turnRoute(chatAdapter))
  .all("/v1/chat/completions", notAllowed("POST"))
  .post("/v1/responses", turnRoute(responsesAdapter))
  .get("/v1/responses", (request, rc) => handleResponsesSocket(request, rc))
  .post("/v1/responses/compact", (request, rc) => handleCompact(request, rc))
  .post("/v1/responses/input_tokens", (request, rc) => handleInputTokens(request, rc))
  .all("/v1/responses/input_tokens", notAllowed("POST"))
  .all("/v1/responses", notAllowed("GET (WebSocket), POST"))
  .get("/v1/responses/:id", (request, rc) => handleGetResponse(request, rc, request.params.id ?? ""))
  .delete("/v1/responses/:id", (request, rc) => handleDeleteResponse(request, rc, request.params.id ?? ""))
  .all("/v1/responses/:id", notAllowed("GET, DELETE"))
  .get("/v1beta/models", (request, rc) => handleGeminiListModels(request, rc))
  .all("/v1beta/models", notAllowed("GET"))
  .post("/v1beta/models/:action", (request, rc) => handleGeminiModelAction(request, rc, request.params.action ?? ""))
  .get("/v1beta/models/:id", (request, rc) => handleGeminiGetModel(request, rc, request.params.id ?? ""))
  .all("/v1beta/models/:id", notAllowed("GET, POST"))
  .all("*", (request) => {
    throw ApiError.notFound(`Not found: ${request.method} ${new URL(request.url).pathname}`);
  });
