/** The Durable Objects a turn reaches: its session and pool, its tenant's authority, the edge metrics. */
import type { MetricsBindings } from "../metrics/edge-metrics-do.ts";
import type { RouteBindings } from "../session/resolved-session.ts";
import type { TenantAuthorityBindings } from "../tenancy/authority/tenant-authority-do.ts";

export type TurnBindings = RouteBindings & TenantAuthorityBindings & MetricsBindings;
