/**
 * The Worker's bindings (wrangler.toml), the one place that names every Durable Object class. Each
 * room declares the binding it owns (`SessionBindings` beside SessionDO, …) and its code takes only
 * those, so nothing below the router imports this file and no Durable Object imports `Env`.
 */
import type { EdgeVars } from "./config/config.ts";
import type { MetricsBindings } from "./metrics/edge-metrics-do.ts";
import type { PoolBindings } from "./pool/pool-do.ts";
import type { ResponseStoreBindings } from "./protocols/responses/response-store-do.ts";
import type { SessionBindings } from "./session/session-do.ts";
import type { TenantAuthorityBindings } from "./tenancy/authority/tenant-authority-do.ts";
import type { RegistryBindings } from "./tenancy/registry/registry-do.ts";
import type { UsageBindings } from "./tenancy/usage-do.ts";

export interface Env
  extends EdgeVars,
    SessionBindings,
    PoolBindings,
    ResponseStoreBindings,
    UsageBindings,
    MetricsBindings,
    TenantAuthorityBindings,
    RegistryBindings {}
