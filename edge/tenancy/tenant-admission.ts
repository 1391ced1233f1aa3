/**
 * Admission to the model routes: a request past its tenant's concurrency or rate (tenant-limits.ts)
 * gets `429 rate_limit_error` with `retry-after`, in the route's protocol shape. The slot is held
 * until the client has the whole response (a stream: its last byte, or the client going away;
 * `rc.sent`).
 *
 * For a tenant whose limits leave room (PREFETCH_MIN_CONCURRENT slots or more, PREFETCH_MIN_PER_MINUTE
 * or more per minute, or no limit), a finished request hands its slot on: the limiter releases it and
 * admits the tenant's next request through this isolate in the same call (TenantLimiterDO.pass). That
 * request is admitted without waiting for the limiter and claims the lease off its path. The limits
 * stay strict: a prefetched admission is counted (slot and rate token) before anything uses it; an
 * unused one holds one slot for at most PREFETCH_MS and gives its token back.
 */
import type { TenantLimits } from "../config/tenant-limits.ts";
import { ApiError } from "../core/errors.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticateCaller, type Caller } from "./auth.ts";
import { type Admission, PREFETCH_MS, type TenantLimiterBindings } from "./tenant-limiter-do.ts";

/** Tenants with fewer concurrent slots than this are admitted per request (a held slot would matter). */
export const PREFETCH_MIN_CONCURRENT = 8;
/** Tenants with a lower rate than this are admitted per request. */
export const PREFETCH_MIN_PER_MINUTE = 60;
/** A prefetched lease is used only while this much of its life is left (the DO's clock runs on). */
const PREFETCH_MARGIN_MS = 2_000;

/** Per isolate: one prefetched admission per tenant (lease id, usable until). */
const prefetched = new Map<string, { leaseId: string; until: number }>();

function prefetchable(limits: TenantLimits): boolean {
  const slots = limits.concurrent === 0 || limits.concurrent >= PREFETCH_MIN_CONCURRENT;
  return slots && (limits.perMinute === 0 || limits.perMinute >= PREFETCH_MIN_PER_MINUTE);
}

type Handler<E> = (request: Request, rc: RequestContext<E>) => Promise<Response>;
type CallerHandler<E> = (request: Request, rc: RequestContext<E>, caller: Caller) => Promise<Response>;

/**
 * Authenticate (from headers, before any body is read), then run `handler` inside one of the
 * tenant's slots (429 when none is free or its rate is spent). The limiter is asked at once and
 * answers alongside the handler's own work (`rc.admitted`): the handler waits for it before it calls
 * a worker, and a refused request answers 429 whatever it became.
 */
export function tenantLimited<E extends TenantLimiterBindings>(handler: CallerHandler<E>): Handler<E> {
  return async (request, rc) => {
    const caller = await authenticateCaller(request.headers, rc.config.apiKeys);
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
  const { tenant } = caller;
  const limiter = rc.env.TENANTS.getByName(tenant);
  const prefetch = prefetchable(limits);
  const held = prefetch ? takePrefetched(tenant) : undefined;
  // Claimed off the turn's path; a lease that lapsed after all (clock skew) is counted afresh.
  if (held) {
    const claimed = async () => {
      if (!(await limiter.claim(held))) await limiter.acquire(held, limits);
    };
    rc.waitUntil(claimed());
  }
  const leaseId = held ?? rc.requestId;
  const done = async () => {
    if (!prefetch || prefetched.has(tenant)) return limiter.release(leaseId);
    const next = `${rc.requestId}.next`;
    const admission = await limiter.pass(leaseId, next, limits);
    if (!admission.ok) return;
    if (prefetched.has(tenant)) await limiter.release(next, limits);
    else prefetched.set(tenant, { leaseId: next, until: Date.now() + PREFETCH_MS - PREFETCH_MARGIN_MS });
  };
  const acquired: Promise<Admission> = held ? Promise.resolve({ ok: true }) : limiter.acquire(rc.requestId, limits);
  const admitted = acquired.then((admission) => {
    if (!admission.ok) throw refusal(limits, admission);
    rc.sent.after(done);
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

/** Drop the tenant's prefetched admission in this isolate (it lapses at the DO): as a fresh isolate finds it. */
export function dropPrefetchedAdmission(tenant: string): void {
  prefetched.delete(tenant);
}

/** The tenant's prefetched admission in this isolate, taken; undefined when none is usable. */
function takePrefetched(tenant: string): string | undefined {
  const entry = prefetched.get(tenant);
  if (!entry) return undefined;
  prefetched.delete(tenant);
  // A lapsed one is the DO's to expire (it gives the token back): nothing to tell it.
  return entry.until > Date.now() ? entry.leaseId : undefined;
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
