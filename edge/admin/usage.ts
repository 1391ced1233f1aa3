/**
 * GET /admin/usage[?tenant=<id>][&from=YYYY-MM-DD][&to=YYYY-MM-DD] (admin token): each tenant's token
 * usage from its UsageDO — daily buckets per key (a hash prefix of the API key) and all-time totals.
 * Without `tenant`, every tenant API_KEYS names.
 */

import { ApiError } from "../core/errors.ts";
import { jsonResponse } from "../http/body.ts";
import type { UsageReport } from "../tenancy/usage-do.ts";
import { requireAdmin } from "./bearer.ts";
import type { AdminContext } from "./bindings.ts";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export async function handleUsage(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc);
  const query = new URL(request.url).searchParams;
  const range: { from?: string; to?: string } = {};
  for (const name of ["from", "to"] as const) {
    const value = query.get(name);
    if (value === null) continue;
    if (!DAY.test(value)) throw ApiError.invalid(`${name}: expected a UTC day as YYYY-MM-DD`);
    range[name] = value;
  }
  const known = configuredTenants(rc);
  const tenant = query.get("tenant");
  if (tenant !== null && !known.includes(tenant)) throw ApiError.notFound(`No tenant "${tenant}" is configured`);
  const tenants = tenant === null ? known : [tenant];
  return jsonResponse({ tenants: await usageOf(rc, tenants, range) });
}

/** The usage reports of these tenants (also read by the metrics and status endpoints). */
export async function usageOf(
  rc: AdminContext,
  tenants: readonly string[],
  range: { from?: string; to?: string } = {},
): Promise<(UsageReport & { tenant: string })[]> {
  return Promise.all(
    tenants.map(async (tenant) => ({ tenant, ...(await rc.env.USAGE.getByName(tenant).report(range)) })),
  );
}

export function configuredTenants(rc: AdminContext): string[] {
  return [...new Set(rc.config.apiKeys.values())].sort();
}
