/**
 * `reasoning.encrypted_content`: Frontier's own AEAD ciphertext of the exact reasoning a turn
 * sampled, so a `store: false` client (Codex) that replays it gets those exact bytes rendered back
 * even after the worker forgot the turn. AES-256-GCM (WebCrypto) under a per-tenant key derived
 * from ID_SECRET with HKDF; the tenant is also the additional data, so one tenant's blob never
 * opens for another. A blob that does not open (tampered, foreign, another deployment's) is
 * treated as context, never as Frontier's reasoning.
 *
 * Wire form: `frv1.` + base64url(12-byte nonce ‖ ciphertext ‖ 16-byte tag).
 */
import type { InputItem } from "./types.ts";

const PREFIX = "frv1.";
const NONCE_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** Derived keys per (secret, tenant); bounded so a flood of tenants cannot grow it without limit. */
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 1024;

function tenantKey(secret: string, tenant: string): Promise<CryptoKey> {
  const cacheKey = `${secret}\u0000${tenant}`;
  let key = keys.get(cacheKey);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]).then((base) =>
      crypto.subtle.deriveKey(
        {
          name: "HKDF",
          hash: "SHA-256",
          salt: encoder.encode("frontier reasoning v1"),
          info: encoder.encode(tenant),
        },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      ),
    );
    keys.set(cacheKey, key);
  }
  return key;
}

function additionalData(tenant: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(encoder.encode(`reasoning\u0000${tenant}`));
}

export async function sealReasoning(secret: string, tenant: string, text: string): Promise<string> {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: nonce, additionalData: additionalData(tenant) },
    await tenantKey(secret, tenant),
    encoder.encode(text),
  );
  const all = new Uint8Array(NONCE_BYTES + sealed.byteLength);
  all.set(nonce);
  all.set(new Uint8Array(sealed), NONCE_BYTES);
  return PREFIX + toBase64Url(all);
}

/** The exact reasoning text, or undefined for anything Frontier did not seal for this tenant. */
export async function openReasoning(secret: string, tenant: string, blob: string): Promise<string | undefined> {
  if (!blob.startsWith(PREFIX)) return undefined;
  const bytes = fromBase64Url(blob.slice(PREFIX.length));
  if (!bytes || bytes.length < NONCE_BYTES + 16) return undefined;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, NONCE_BYTES), additionalData: additionalData(tenant) },
      await tenantKey(secret, tenant),
      bytes.subarray(NONCE_BYTES),
    );
    return decoder.decode(plain);
  } catch {
    return undefined;
  }
}

/**
 * Reasoning items that carry `encrypted_content`: a blob that opens replaces the item's text with
 * the exact sealed reasoning (`verified`); one that does not is marked `foreign` (context only).
 */
export async function unsealReasoningItems(secret: string, tenant: string, items: InputItem[]): Promise<InputItem[]> {
  return Promise.all(
    items.map(async (item): Promise<InputItem> => {
      if (item.type !== "reasoning" || item.encrypted_content === undefined) return item;
      const text = await openReasoning(secret, tenant, item.encrypted_content);
      return text === undefined ? { ...item, sealed: "foreign" } : { ...item, text, sealed: "verified" };
    }),
  );
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}
