/**
 * GET /admin/usage[?tenant=<id>][&from=YYYY-MM-DD][&to=YYYY-MM-DD] (admin `read` or `billing`): each
 * tenant's usage from its authority's ledger — daily buckets per key (a run-time key's id, or an
 * API_KEYS key's hash prefix) and all-time totals, tokens and cost — plus what the UsageDO counted
 * before the authorities kept the ledger. Without `tenant`, every tenant the deployment has known:
 * API_KEYS's and the registry's, archived ones included (their history stays).
 */

import { ApiError } from "../core/errors.ts";
import { jsonResponse } from "../http/body.ts";
import { authorityOf } from "../tenancy/admission.ts";
import { addUsage, type UsageReport, type UsageTotals } from "../tenancy/authority/usage-ledger.ts";
import { registryStub } from "../tenancy/registry/registry-do.ts";
import { requireAdmin } from "./admin-access.ts";
import type { AdminContext } from "./bindings.ts";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export async function handleUsage(request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: ["read", "billing"], tenant: "listing" });
  const query = new URL(request.url).searchParams;
  const range: { from?: string; to?: string } = {};
  for (const name of ["from", "to"] as const) {
    const value = query.get(name);
    if (value === null) continue;
    if (!DAY.test(value)) throw ApiError.invalid(`${name}: expected a UTC day as YYYY-MM-DD`);
    range[name] = value;
  }
  const tenant = query.get("tenant") ?? admin.tenant ?? null;
  if (admin.tenant !== null && tenant !== admin.tenant) throw ApiError.notFound(`No tenant "${tenant}" is known`);
  const known = await knownTenants(rc);
  if (tenant !== null && !known.includes(tenant)) throw ApiError.notFound(`No tenant "${tenant}" is known`);
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
    tenants.map(async (tenant) => {
      const [ledger, legacy] = await Promise.all([
        authorityOf(rc.env, tenant).usageReport(range),
        rc.env.USAGE.getByName(tenant).report(range),
      ]);
      return { tenant, ...merged(ledger, legacy) };
    }),
  );
}

/** Every tenant: API_KEYS's (listed in the registry on the way) and the registry's, archived included, sorted. */
export async function knownTenants(rc: AdminContext): Promise<string[]> {
  const registry = registryStub(rc.env);
  const env = [...new Set(rc.config.apiKeys.values())];
  await registry.addEnvTenants(env);
  return [...new Set([...env, ...(await registry.tenantIds())])].sort();
}

type LegacyReport = {
  days: (Omit<UsageTotals, "costNano"> & { day: string; keyId: string })[];
  keys: (Omit<UsageTotals, "costNano"> & { keyId: string })[];
};

/** The ledger's report with the UsageDO's (kept before the ledger, no cost) added in. */
function merged(ledger: UsageReport, legacy: LegacyReport): UsageReport {
  if (legacy.days.length === 0 && legacy.keys.length === 0) return ledger;
  const add = <T extends UsageTotals>(into: Map<string, T>, name: string, row: T) => {
    const have = into.get(name);
    into.set(name, have ? addUsage(have, row) : row);
  };
  const days = new Map<string, UsageReport["days"][number]>();
  for (const d of [...legacy.days.map((d) => ({ ...d, costNano: 0 })), ...ledger.days])
    add(days, `${d.day}\u0000${d.keyId}`, d);
  const keys = new Map<string, UsageReport["keys"][number]>();
  for (const k of [...legacy.keys.map((k) => ({ ...k, costNano: 0 })), ...ledger.keys]) add(keys, k.keyId, k);
  return {
    days: [...days.values()].sort((a, b) => a.day.localeCompare(b.day) || a.keyId.localeCompare(b.keyId)),
    keys: [...keys.values()].sort((a, b) => a.keyId.localeCompare(b.keyId)),
  };
}
