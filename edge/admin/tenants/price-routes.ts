/**
 * The price table (docs/operations/tenants.md):
 *   GET  /admin/prices              the current version: per model, input, cached input, output per
 *                                   million tokens, in the table's currency
 *   POST /admin/prices              a new version { currency?, prices: [{model, input, cached_input?, output}], remove?: [model] }
 *   GET  /admin/prices/versions     every version, newest first
 * The model `*` prices every model without a row. Each turn records the version that costed it;
 * tenants' authorities pick up a new version within PRICE_CACHE_MS (30 s).
 */
import { fail, isObject } from "../../core/check.ts";
import { jsonResponse } from "../../http/body.ts";
import type { ModelPrice } from "../../tenancy/pricing.ts";
import type { PriceChange } from "../../tenancy/registry/price-book.ts";
import { registryStub } from "../../tenancy/registry/registry-do.ts";
import { auditContext, requireAdmin } from "../admin-access.ts";
import type { AdminContext } from "../bindings.ts";
import { bodyObject, pageRequest, unknownCursor } from "./admin-input.ts";
import { pricesJson } from "./render.ts";

const READ = { scope: ["read", "billing"] as const, tenant: "listing" as const };
const MAX_PRICE = 1e6;

export async function handleGetPrices(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, READ);
  return jsonResponse(pricesJson(await registryStub(rc.env).prices()));
}

export async function handleSetPrices(request: Request, rc: AdminContext): Promise<Response> {
  const admin = await requireAdmin(request, rc, { scope: "billing" });
  const change = priceChange(await bodyObject(request));
  const table = await registryStub(rc.env).setPrices(change, auditContext(request, rc, admin));
  return jsonResponse(pricesJson(table));
}

export async function handlePriceVersions(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, READ);
  const page = await registryStub(rc.env).priceVersions(pageRequest(new URL(request.url)));
  if (!page) throw unknownCursor();
  return jsonResponse({ ...page, data: page.data.map(pricesJson) });
}

function priceChange(body: Record<string, unknown>): PriceChange {
  const set: Record<string, ModelPrice> = {};
  const prices = body.prices ?? [];
  if (!Array.isArray(prices)) fail(["prices"], "an array of {model, input, cached_input?, output}");
  prices.forEach((row: unknown, i) => {
    if (!isObject(row)) fail(["prices", i], "an object {model, input, cached_input?, output}");
    const model = row.model;
    if (typeof model !== "string" || model === "" || model.length > 256)
      fail(["prices", i, "model"], "a model id, or * for every other model");
    const input = micro(row.input, ["prices", i, "input"]);
    const cached = row.cached_input === undefined ? input : micro(row.cached_input, ["prices", i, "cached_input"]);
    set[model] = {
      inputMicro: input,
      cachedInputMicro: cached,
      outputMicro: micro(row.output, ["prices", i, "output"]),
    };
  });
  const remove = body.remove ?? [];
  if (!Array.isArray(remove) || remove.some((m) => typeof m !== "string")) fail(["remove"], "an array of model ids");
  const currency = body.currency;
  if (currency !== undefined && (typeof currency !== "string" || !/^[a-z]{3}$/.test(currency))) {
    fail(["currency"], "a lowercase ISO 4217 code, e.g. usd");
  }
  if (Object.keys(set).length === 0 && remove.length === 0 && currency === undefined)
    fail(["prices"], "nothing to change");
  return { set, remove: remove as string[], currency };
}

/** A price per million tokens (≥ 0, at most six decimals) in micro-units. */
function micro(value: unknown, path: (string | number)[]): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_PRICE) {
    fail(path, `a price per million tokens from 0 to ${MAX_PRICE}`);
  }
  const scaled = Math.round(value * 1e6);
  if (Math.abs(scaled - value * 1e6) > 1e-3) fail(path, "at most six decimals");
  return scaled;
}
