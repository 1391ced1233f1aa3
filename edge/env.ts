/** The Worker's bindings (wrangler.toml). */
import type { EdgeVars } from "./config.ts";
import type { ResponseStoreDO } from "./openai/response-store-do.ts";
import type { PoolDO } from "./pool/pool-do.ts";
import type { SessionDO } from "./session-do.ts";
import type { TenantLimiterDO } from "./tenant-limiter-do.ts";

export interface Env extends EdgeVars {
  SESSIONS: DurableObjectNamespace<SessionDO>;
  /** One GPU worker pool per region (`pool:<region>`). */
  POOLS: DurableObjectNamespace<PoolDO>;
  /** Stored Responses API records, one object per session. */
  RESPONSES: DurableObjectNamespace<ResponseStoreDO>;
  /** Per-tenant concurrency and rate limits, one object per tenant. */
  TENANTS: DurableObjectNamespace<TenantLimiterDO>;
}
