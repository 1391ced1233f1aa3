/** The Worker's bindings (wrangler.toml). */
import type { EdgeVars } from "./config/config.ts";
import type { EdgeMetricsDO } from "./metrics/edge-metrics-do.ts";
import type { PoolDO } from "./pool/pool-do.ts";
import type { ResponseStoreDO } from "./protocols/responses/response-store-do.ts";
import type { SessionDO } from "./session/session-do.ts";
import type { TenantLimiterDO } from "./tenancy/tenant-limiter-do.ts";
import type { UsageDO } from "./tenancy/usage-do.ts";

export interface Env extends EdgeVars {
  SESSIONS: DurableObjectNamespace<SessionDO>;
  /** One GPU worker pool per region (`pool:<region>`). */
  POOLS: DurableObjectNamespace<PoolDO>;
  /** Stored Responses API records, one object per session. */
  RESPONSES: DurableObjectNamespace<ResponseStoreDO>;
  /** Token usage per tenant (billing), one object per tenant. */
  USAGE: DurableObjectNamespace<UsageDO>;
  /** The edge's request and turn counters (one object, "edge"). */
  METRICS: DurableObjectNamespace<EdgeMetricsDO>;
  /** Per-tenant concurrency and rate limits, one object per tenant. */
  TENANTS: DurableObjectNamespace<TenantLimiterDO>;
}
