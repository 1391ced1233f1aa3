/**
 * Frontier's edge: a Worker serving the Anthropic Messages API and forwarding turns to the GPU
 * workers over gRPC-Web. Every response carries a `request-id`.
 */
import { loadConfig } from "./config/config.ts";
import { clock } from "./core/clock.ts";
import { toApiError } from "./core/errors.ts";
import type { RateLimitSlot } from "./core/rate-limits.ts";
import { ResponseSent } from "./core/response-sent.ts";
import { EdgeTiming } from "./core/timing.ts";
import type { Env } from "./env.ts";
import { newRequestId } from "./http/body.ts";
import { recordRequest } from "./metrics/record.ts";
import { rateLimitHeaders, renderError, router } from "./router.ts";

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
