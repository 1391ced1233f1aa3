/** The Durable Objects a turn reaches: its session and pool, its tenant's limiter and usage, the edge metrics. */
import type { MetricsBindings } from "../metrics/edge-metrics-do.ts";
import type { RouteBindings } from "../session/resolved-session.ts";
import type { TenantLimiterBindings } from "../tenancy/tenant-limiter-do.ts";
import type { UsageBindings } from "../tenancy/usage-do.ts";

export type TurnBindings = RouteBindings & TenantLimiterBindings & UsageBindings & MetricsBindings;
