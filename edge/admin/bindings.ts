/** What the admin routes reach: sessions and pools (drain), usage and the edge metrics. */
import type { RequestContext } from "../http/context.ts";
import type { MetricsBindings } from "../metrics/edge-metrics-do.ts";
import type { ResponseStoreBindings } from "../protocols/responses/response-store-do.ts";
import type { RouteBindings } from "../session/resolved-session.ts";
import type { UsageBindings } from "../tenancy/usage-do.ts";

export type AdminBindings = RouteBindings & UsageBindings & MetricsBindings & ResponseStoreBindings;

/** The admin routes' request context. */
export type AdminContext = RequestContext<AdminBindings>;
