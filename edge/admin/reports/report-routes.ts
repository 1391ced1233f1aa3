/**
 * GET /admin/usage_report and GET /admin/cost_report (admin `read` or `billing`): usage and cost in
 * hourly or daily buckets, grouped by tenant, key and model, paginated by buckets, as JSON or CSV
 * (report-query.ts). Summed from each tenant's ledger (its hourly buckets, where every turn is
 * counted once by request id), for every tenant the deployment has known — archived tenants and
 * revoked keys included. A tenant's admin sees its own tenant only. Costs are in the current price
 * table's currency (each turn was costed at the version that admitted it).
 */
import { clock } from "../../core/clock.ts";
import { ApiError } from "../../core/errors.ts";
import { authorityOf } from "../../tenancy/admission.ts";
import { registryStub } from "../../tenancy/registry/registry-do.ts";
import { requireAdmin } from "../admin-access.ts";
import type { AdminContext } from "../bindings.ts";
import { knownTenants } from "../usage.ts";
import { reportBuckets } from "./report-buckets.ts";
import { reportQuery } from "./report-query.ts";
import { type ReportKind, renderReport } from "./report-render.ts";

export function handleUsageReport(request: Request, rc: AdminContext): Promise<Response> {
  return report("usage", request, rc);
}

export function handleCostReport(request: Request, rc: AdminContext): Promise<Response> {
  return report("cost", request, rc);
}

async function report(kind: ReportKind, request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: ["read", "billing"], tenant: "listing" });
  const query = reportQuery(request, clock.now());
  if (admin.tenant !== null && query.tenantIds?.some((t) => t !== admin.tenant)) {
    throw new ApiError("permission_error", `This admin key reaches tenant "${admin.tenant}" only`);
  }
  const known = admin.tenant !== null ? [admin.tenant] : await knownTenants(rc);
  const tenants = query.tenantIds ? known.filter((t) => query.tenantIds?.includes(t)) : known;
  const [hours, prices] = await Promise.all([
    Promise.all(
      tenants.map(async (tenant) => ({
        tenant,
        hours: await authorityOf(rc.env, tenant).usageHours(query.from, query.to),
      })),
    ),
    kind === "cost" ? registryStub(rc.env).prices() : undefined,
  ]);
  return renderReport(kind, query, reportBuckets(query, hours), prices?.currency ?? "", new URL(request.url));
}
