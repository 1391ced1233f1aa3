/**
 * The fingerprint of a conversation's prompt prefix (system + tools), per tenant. The edge computes
 * it from the request it normalised, the worker from the same proto fields, so "this worker holds a
 * checkpoint of that prefix" can be compared without either side rendering the other's template.
 * 32 hex characters of sha256; the tenant is part of the input, so tenants never share one.
 */
import { toHex } from "./ids.ts";

export interface PrefixParts {
  system: readonly string[];
  tools: readonly { name: string; description: string; inputSchemaJson: string }[];
}

export async function prefixFingerprint(tenant: string, parts: PrefixParts): Promise<string> {
  const canonical = JSON.stringify([
    tenant,
    parts.system,
    parts.tools.map((tool) => [tool.name, tool.description, tool.inputSchemaJson]),
  ]);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  return toHex(new Uint8Array(digest)).slice(0, 32);
}

export function isPrefixFingerprint(value: unknown): value is string {
  return typeof value === "string" && /^[0-9a-f]{32}$/.test(value);
}
