/**
 * A tenant's key list: its API_KEYS keys (read-only, by their SHA-256 prefix) first, then the keys
 * issued at run time in creation order, as one cursor-paginated list.
 */
import type { Page, PageRequest } from "../../core/pages.ts";
import { pageOf } from "../../core/pages.ts";
import { authorityOf } from "../../tenancy/admission.ts";
import type { AdminContext } from "../bindings.ts";
import { envKeyJson, keyJson } from "./render.ts";

type KeyItem = ReturnType<typeof keyJson> | ReturnType<typeof envKeyJson>;

/** The ids (SHA-256's first 16 hex characters) of the tenant's API_KEYS keys, sorted. */
export function envKeyIds(rc: AdminContext, tenant: string): string[] {
  const ids: string[] = [];
  for (const [digest, owner] of rc.config.apiKeys) if (owner === tenant) ids.push(digest.slice(0, 16));
  return ids.sort();
}

export async function keyPage(
  rc: AdminContext,
  tenant: string,
  request: PageRequest,
): Promise<Page<KeyItem> | undefined> {
  const env = envKeyIds(rc, tenant).map((id) => envKeyJson(tenant, id));
  const authority = authorityOf(rc.env, tenant);
  const runtime = async (cursor: PageRequest) => {
    const page = await authority.keys(cursor);
    return page?.data.map((key) => keyJson(tenant, key));
  };
  const want = request.limit + 1;
  const envIndex = (id: string | undefined) => (id === undefined ? -1 : env.findIndex((k) => k.id === id));
  let rows: KeyItem[] | undefined;
  if (request.beforeId !== undefined) {
    const at = envIndex(request.beforeId);
    if (at >= 0) rows = env.slice(Math.max(0, at - want), at);
    else {
      const issued = await runtime({ limit: want, beforeId: request.beforeId });
      if (!issued) return undefined;
      const fill = want - issued.length;
      rows = [...(fill > 0 ? env.slice(Math.max(0, env.length - fill)) : []), ...issued];
    }
  } else {
    const at = envIndex(request.afterId);
    const envRows = request.afterId === undefined ? env : at >= 0 ? env.slice(at + 1) : [];
    const afterId = at >= 0 || request.afterId === undefined ? undefined : request.afterId;
    const issued = await runtime({ limit: Math.max(0, want - envRows.length), afterId });
    if (!issued) return undefined;
    rows = [...envRows, ...issued].slice(0, want);
  }
  return pageOf(rows, request);
}
