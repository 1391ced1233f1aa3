/**
 * A search hit's `encrypted_content`: Frontier's AEAD (edge/core/sealed-text.ts, purpose web_search_hit)
 * of the JSON of exactly what the model read of the hit, so a replay renders those bytes again
 * (shared/server-tool-text.ts) even after the worker forgot the turn; nobody else can read or forge it.
 */
import type { SearchHit } from "../../shared/server-tool-text.ts";
import { openText, sealText } from "../core/sealed-text.ts";

export interface SealKeys {
  secret: string;
  tenant: string;
}

export function sealHit(keys: SealKeys, hit: SearchHit): Promise<string> {
  const body = { url: hit.url, title: hit.title, pageAge: hit.pageAge ?? "", text: hit.text ?? "" };
  return sealText(keys.secret, keys.tenant, "web_search_hit", JSON.stringify(body));
}

/** The hit Frontier sealed, or undefined for a blob that does not open (foreign, tampered, another tenant's). */
export async function openHit(keys: SealKeys, blob: string): Promise<SearchHit | undefined> {
  return parseSealedHit(await openText(keys.secret, keys.tenant, "web_search_hit", blob));
}

/** The hit inside an opened `web_search_hit` blob (undefined: not a sealed hit's JSON). */
export function parseSealedHit(json: string | undefined): SearchHit | undefined {
  if (json === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== "object" || value === null) return undefined;
    const { url, title, pageAge, text } = value as Record<string, unknown>;
    if (typeof url !== "string" || typeof title !== "string") return undefined;
    return {
      url,
      title,
      pageAge: typeof pageAge === "string" ? pageAge : "",
      text: typeof text === "string" ? text : "",
    };
  } catch {
    return undefined;
  }
}

/**
 * A Responses `web_search_call`'s sealed result (the item has no result field of its own): the hits
 * or error code the model read, and whether the call ran in the same step as the call before it
 * (Responses items do not show where one step ends, the rendering depends on it).
 */
export interface SealedCallResult {
  hits: SearchHit[];
  errorCode: string;
  sameStep: boolean;
}

export function sealCallResult(keys: SealKeys, result: SealedCallResult): Promise<string> {
  return sealText(keys.secret, keys.tenant, "web_search_hit", JSON.stringify({ call: result }));
}

export async function openCallResult(keys: SealKeys, blob: string): Promise<SealedCallResult | undefined> {
  const json = await openText(keys.secret, keys.tenant, "web_search_hit", blob);
  if (json === undefined) return undefined;
  try {
    const parsed = JSON.parse(json) as { call?: Partial<SealedCallResult> };
    const call = parsed.call;
    if (!call || !Array.isArray(call.hits) || typeof call.errorCode !== "string") return undefined;
    return { hits: call.hits, errorCode: call.errorCode, sameStep: call.sameStep === true };
  } catch {
    return undefined;
  }
}
