/**
 * Admission to the model routes: a request past its tenant's concurrency or rate (tenant-limits.ts)
 * gets `429 rate_limit_error` with `retry-after`, in the route's protocol shape. The slot is held
 * until the client has the whole response (a stream: its last byte, or the client going away;
 * `rc.sent`).
 */
import type { TenantLimits } from "../config/tenant-limits.ts";
import { ApiError } from "../core/errors.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticateCaller, type Caller } from "./auth.ts";
import type { Admission, TenantLimiterBindings } from "./tenant-limiter-do.ts";

type Handler<E> = (request: Request, rc: RequestContext<E>) => Promise<Response>;
/** The caller a request's key names, read from its headers or URL only (never its body). */
export type Authenticator = (request: Request, keys: ReadonlyMap<string, string>) => Promise<Caller>;
type CallerHandler<E> = (request: Request, rc: RequestContext<E>, caller: Caller) => Promise<Response>;

/**
 * Authenticate (from headers, before any body is read), then run `handler` inside one of the
 * tenant's slots (429 when none is free or its rate is spent). The limiter is asked at once and
 * answers alongside the handler's own work (`rc.admitted`): the handler waits for it before it calls
 * a worker, and a refused request answers 429 whatever it became.
 */
export function tenantLimited<E extends TenantLimiterBindings>(
  handler: CallerHandler<E>,
  authenticate: Authenticator = (request, keys) => authenticateCaller(request.headers, keys),
): Handler<E> {
  return async (request, rc) => {
    const caller = await authenticate(request, rc.config.apiKeys);
    return withAdmission(rc, caller, (admittedRc) => handler(request, admittedRc, caller));
  };
}

/**
 * Run `work` inside one of an authenticated caller's slots (a transport that authenticated once, a
 * socket, calls this per turn). The slot is released once `rc.sent` says the client has it all.
 */
export async function withAdmission<E extends TenantLimiterBindings>(
  rc: RequestContext<E>,
  caller: Caller,
  work: (rc: RequestContext<E>) => Promise<Response>,
): Promise<Response> {
  const limits = rc.config.tenantLimits.overrides.get(caller.tenant) ?? rc.config.tenantLimits.defaults;
  if (limits.concurrent === 0 && limits.perMinute === 0) return work(rc);
  const limiter = rc.env.TENANTS.getByName(caller.tenant);
  const acquired = limiter.acquire(rc.requestId, limits);
  const admitted = acquired.then((admission) => {
    if (!admission.ok) throw refusal(limits, admission);
    rc.sent.after(() => limiter.release(rc.requestId));
  });
  admitted.catch(() => undefined); // awaited below; this only keeps it from counting as unhandled
  try {
    const response = await work({ ...rc, admitted });
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
