/**
 * A tenant's data key, the root of its checkpoints' envelope encryption on the GPU workers:
 * HMAC-SHA256(edge master, `frontier/tenant-data/v1` ‖ 0 ‖ tenant), 32 bytes. The edge derives it
 * and sends it with each of that tenant's Generate calls (`GenerateRequest.tenant_data_key`); a
 * worker seals the tenant's checkpoints under it (AES-256-GCM, a fresh key per file wrapped by this
 * one) and holds it only while the session is resident, so a worker sees the keys of the tenants
 * whose turns it serves and no others. The master is `ID_SECRET`, which stays at the edge.
 */

const LABEL = "frontier/tenant-data/v1";
const encoder = new TextEncoder();
/** Derived keys per (secret, tenant); bounded so a flood of tenants cannot grow it without limit. */
const keys = new Map<string, Promise<Uint8Array>>();
const MAX_KEYS = 1024;

export function tenantDataKey(secret: string, tenant: string): Promise<Uint8Array> {
  const cacheKey = `${secret}\u0000${tenant}`;
  let key = keys.get(cacheKey);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = crypto.subtle
      .importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
      .then((master) => crypto.subtle.sign("HMAC", master, encoder.encode(`${LABEL}\u0000${tenant}`)))
      .then((bytes) => new Uint8Array(bytes));
    keys.set(cacheKey, key);
  }
  return key;
}
