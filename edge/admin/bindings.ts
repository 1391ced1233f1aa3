/** What the admin routes reach: sessions and pools (drain), tenants' authorities, the registry, usage and metrics. */
import type { RequestContext } from "../http/context.ts";
import type { MetricsBindings } from "../metrics/edge-metrics-do.ts";
import type { ResponseStoreBindings } from "../protocols/responses/response-store-do.ts";
import type { RouteBindings } from "../session/resolved-session.ts";
import type { TenantAuthorityBindings } from "../tenancy/authority/tenant-authority-do.ts";
import type { RegistryBindings } from "../tenancy/registry/registry-do.ts";
import type { UsageBindings } from "../tenancy/usage-do.ts";

export type AdminBindings = RouteBindings &
  UsageBindings &
  MetricsBindings &
  ResponseStoreBindings &
  TenantAuthorityBindings &
  RegistryBindings;

/** The admin routes' request context. */
export type AdminContext = RequestContext<AdminBindings>;
