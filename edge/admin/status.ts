/**
 * GET /admin/status       the status page (HTML; admin token as Bearer or as the Basic password)
 * GET /admin/status.json  its data
 * Both are reads: Basic auth is what lets a browser open the page, and the page itself fetches its
 * data same-origin. A cross-site page cannot read either (no CORS headers) and is refused outright
 * (Sec-Fetch-Site), except a top-level navigation to the page (admin-access.ts, cross-site.ts).
 */

import { jsonResponse } from "../http/body.ts";
import { requireAdmin } from "./admin-access.ts";
import type { AdminContext } from "./bindings.ts";
import { statusData } from "./status-data.ts";
import { STATUS_PAGE_HTML } from "./status-page.ts";

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

export async function handleStatusPage(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, { scope: "read", page: true });
  return new Response(STATUS_PAGE_HTML, { headers: PAGE_HEADERS });
}

export async function handleStatusData(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, { scope: "read" });
  return jsonResponse(await statusData(rc), { headers: { "cache-control": "no-store" } });
}
