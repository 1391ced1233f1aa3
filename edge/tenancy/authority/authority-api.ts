/** What the edge asks a tenant's authority and what it answers (the TenantAuthorityDO's RPC types). */
import type { TenantLimits } from "../../config/tenant-limits.ts";
import type { RateLimitSnapshot } from "../../core/rate-limits.ts";
import type { Credential } from "../auth.ts";
import type { RefusalReason } from "./admission-book.ts";
import type { BudgetPeriod } from "./policy.ts";

/** Who presents itself: the key's id and proof (auth.ts), and the env defaults for this tenant's rates. */
export interface Presented {
  keyId: string;
  credential: Credential;
  env: TenantLimits;
}

/** One request to admit: what it may cost at most. */
export interface AdmitRequest extends Presented {
  requestId: string;
  /** The model it names (checked against the allow-lists; prices the reservation). */
  model: string;
  /** Upper bound of its prompt tokens. */
  inputTokens: number;
  /** Upper bound of its output tokens (max_tokens). */
  outputTokens: number;
}

/** Why a key is not good (any request with it gets 401). */
export type KeyRefusal = "unknown" | "revoked" | "inactive" | "expired" | "archived";

export type AuthorityRefusal =
  | { kind: "key"; why: KeyRefusal }
  | { kind: "model"; model: string }
  | {
      kind: "limit";
      reason: RefusalReason;
      scope: "tenant" | "key";
      /** The limit: per minute, in flight, or the budget in nano-units. */
      limit: number;
      retryAfterS: number;
      period?: BudgetPeriod | undefined;
      currency?: string | undefined;
    };

export type AuthorityAnswer =
  | { ok: true; snapshot: RateLimitSnapshot; models: string[] | null }
  | { ok: false; refusal: AuthorityRefusal; snapshot?: RateLimitSnapshot | undefined };

/** A turn's usage as the edge saw it at its end. */
export interface SettledUsage {
  model: string;
  prefilled: number;
  cached: number;
  output: number;
  /** The turn did not stop (cancelled, failed after its prompt): output is what was streamed. */
  partial: boolean;
}

export interface SettleRequest {
  requestId: string;
  keyId: string;
  /** Absent: nothing ran (the reservation is given back whole). */
  usage?: SettledUsage | undefined;
}
