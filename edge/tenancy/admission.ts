/**
 * The edge's side of admission: every request of a tenant asks that tenant's authority
 * (authority/tenant-authority-do.ts) once, with the key it presented, and the authority's answer is
 * the only verdict (no cache in between: a revoked key is refused by its next request).
 * - a turn: `admitTurn`, asked once the body is decoded (the demand needs the model, the prompt and
 *   max_tokens) and alongside the session lookup; the turn waits for it before calling a worker;
 *   the reservation is settled once the client has the response (`rc.sent`), with the turn's usage;
 * - a route that runs no turn (`/v1/models`, stored responses, the WebSocket upgrade): `authorize`;
 * - a body past `READ_AFTER_ADMISSION_BYTES`: `preflight` first, so a refused caller's large body
 *   is never read.
 * Refusals become the protocol's errors (401, 404 model, 429 with retry-after) and every answer's
 * rate-limit snapshot goes to the response's headers (`rc.rateLimits`).
 */
import type { RequestContext } from "../http/context.ts";
import type { Caller } from "./auth.ts";
import type { AuthorityAnswer, Presented, SettledUsage } from "./authority/authority-api.ts";
import type { KeySelf } from "./authority/key-self.ts";
import type { TenantAuthorityBindings } from "./authority/tenant-authority-do.ts";
import { refusalError } from "./refusals.ts";
import type { TurnDemand } from "./turn-demand.ts";

/** What a turn leaves for its settlement: its usage, once it has some (serve-turn's finish). */
export interface TurnAccount {
  usage?: SettledUsage | undefined;
}

export function authorityOf(env: TenantAuthorityBindings, tenant: string) {
  return env.TENANTS.getByName(tenant);
}

function presented(rc: RequestContext<unknown>, caller: Caller): Presented {
  const limits = rc.config.tenantLimits.overrides.get(caller.tenant) ?? rc.config.tenantLimits.defaults;
  return {
    keyId: caller.keyId,
    credential: caller.credential,
    env: { concurrent: limits.concurrent, perMinute: limits.perMinute },
  };
}

/**
 * Ask the authority to admit one turn. Settles when it answered (rejects with the refusal's error);
 * once admitted, the reservation is settled after the client has the whole response, with whatever
 * `account` holds by then.
 */
export async function admitTurn(
  rc: RequestContext<TenantAuthorityBindings>,
  caller: Caller,
  demand: TurnDemand,
  account: TurnAccount,
): Promise<void> {
  const authority = authorityOf(rc.env, caller.tenant);
  const answer = await authority.admit({ ...presented(rc, caller), requestId: rc.requestId, ...demand });
  verdict(rc, caller, answer);
  rc.sent.after(() =>
    authority.settle({ requestId: rc.requestId, keyId: caller.keyId, usage: account.usage }).catch(() => undefined),
  );
}

/**
 * A request that counts tokens and runs no turn (count_tokens, input_tokens, Gemini's countTokens):
 * its admission checks rates, concurrency and the model's allow-list (`model` undefined: the key
 * alone), reserves nothing and settles with no usage (counting is not billed). `work` runs alongside
 * with the admission as `rc.admitted` (awaited before the worker call); a refusal wins over whatever
 * the request became, so a refused key learns nothing from a 400 or 404.
 */
export async function countAdmitted<E extends TenantAuthorityBindings, T>(
  rc: RequestContext<E>,
  caller: Caller,
  model: string | undefined,
  work: (rc: RequestContext<E>) => Promise<T>,
): Promise<T> {
  const admitted =
    model === undefined
      ? authorize(rc, caller).then(() => undefined)
      : admitTurn(rc, caller, { model, inputTokens: 0, outputTokens: 0 }, {});
  admitted.catch(() => undefined); // awaited below; this only keeps it from counting as unhandled
  try {
    const result = await work({ ...rc, admitted });
    await admitted;
    return result;
  } catch (error) {
    const refused = await admitted.then(
      () => undefined,
      (refusal: unknown) => refusal,
    );
    throw refused ?? error;
  }
}

/** Is the caller's key good now? The models it may use (null: any), or the refusal's error. */
export async function authorize(
  rc: RequestContext<TenantAuthorityBindings>,
  caller: Caller,
  options: { preflight?: boolean } = {},
): Promise<string[] | null> {
  const answer = await authorityOf(rc.env, caller.tenant).authenticate(presented(rc, caller), options);
  return verdict(rc, caller, answer);
}

function verdict(rc: RequestContext<unknown>, caller: Caller, answer: AuthorityAnswer): string[] | null {
  if (answer.snapshot) rc.rateLimits.snapshot = answer.snapshot;
  if (!answer.ok) throw refusalError(answer.refusal, caller.invalidKeyMessage);
  return answer.models;
}

/** What the caller's key reads of itself (GET /v1/key; counts against no limit), or the refusal's error. */
export async function keySelfOf(rc: RequestContext<TenantAuthorityBindings>, caller: Caller): Promise<KeySelf> {
  const answer = await authorityOf(rc.env, caller.tenant).keySelf(presented(rc, caller));
  if (answer.snapshot) rc.rateLimits.snapshot = answer.snapshot;
  if (!answer.ok) throw refusalError(answer.refusal, caller.invalidKeyMessage);
  return answer.self;
}

/** Past this many bytes (declared, or read so far) a body is read on only once `preflight` allowed it. */
export const READ_AFTER_ADMISSION_BYTES = 1 << 20;

/** The read gate for a body: past the first MiB, ask the authority whether this caller would be admitted. */
export function admissionGate(rc: RequestContext<TenantAuthorityBindings>, caller: Caller) {
  return {
    after: READ_AFTER_ADMISSION_BYTES,
    wait: async () => void (await authorize(rc, caller, { preflight: true })),
  };
}
