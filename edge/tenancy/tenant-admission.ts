/**
 * Admission to the model routes: a request past its tenant's concurrency or rate (tenant-limits.ts)
 * gets `429 rate_limit_error` with `retry-after`, in the route's protocol shape. The slot is held
 * until the client has the whole response (a stream: its last byte, or the client going away;
 * `rc.sent`).
 */

import type { TenantLimits } from "../config/tenant-limits.ts";
import { ApiError } from "../core/errors.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "./auth.ts";
import type { Admission } from "./tenant-limiter-do.ts";

type Handler = (request: Request, rc: RequestContext) => Promise<Response>;

/**
 * Run `handler` inside one of the tenant's slots (429 when none is free or its rate is spent). The
 * limiter is asked at once and answers alongside the handler's own work (`rc.admitted`): the handler
 * waits for it before it calls a worker, and a refused request answers 429 whatever it became.
 */
export function tenantLimited(handler: Handler): Handler {
  return async (request, rc) => {
    const tenant = await authenticate(request.headers, rc.config.apiKeys);
    const limits = rc.config.tenantLimits.overrides.get(tenant) ?? rc.config.tenantLimits.defaults;
    if (limits.concurrent === 0 && limits.perMinute === 0) return handler(request, rc);
    const limiter = rc.env.TENANTS.getByName(tenant);
    const acquired = limiter.acquire(rc.requestId, limits);
    const admitted = acquired.then((admission) => {
      if (!admission.ok) throw refusal(limits, admission);
      rc.sent.after(() => limiter.release(rc.requestId));
    });
    admitted.catch(() => undefined); // awaited below; this only keeps it from counting as unhandled
    try {
      const response = await handler(request, { ...rc, admitted });
      await admitted;
      return response;
    } catch (error) {
      // A refusal wins over whatever the request became (a 400 still counted against the limit).
      const refused = await admitted.then(
        () => undefined,
        (refusal: unknown) => refusal,
      );
      throw refused ?? error;
    }
  };
}

function refusal(limits: TenantLimits, admission: Exclude<Admission, { ok: true }>): ApiError {
  const what =
    admission.reason === "concurrency"
      ? `more than ${limits.concurrent} requests in flight`
      : `more than ${limits.perMinute} requests per minute`;
  return new ApiError("rate_limit_error", `This API key's tenant has ${what}; retry after ${admission.retryAfterS} s`, {
    retryAfter: admission.retryAfterS,
    code: "rate_limit_exceeded",
  });
}
