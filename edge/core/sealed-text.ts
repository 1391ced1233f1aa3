/**
 * Frontier's own AEAD: text sealed for one tenant and one purpose (reasoning, a web search hit, a
 * fetched page), so a client that replays it gets those exact bytes rendered back even after the
 * worker forgot the turn, and nobody else can read or forge it. AES-256-GCM (WebCrypto) under a key
 * derived from ID_SECRET with HKDF (salt `frontier <purpose> v1`, info the tenant); the additional
 * data is `<purpose>\0<tenant>`, so a blob never opens for another tenant or another purpose. A blob
 * that does not open (tampered, foreign, another deployment's) is undefined to the caller.
 *
 * Wire form: `frv1.` + base64url(12-byte nonce ‖ ciphertext ‖ 16-byte tag), canonical and unpadded
 * (any other spelling of the same bytes does not open).
 */

/** What a sealed blob is for; each purpose has its own key and additional data. */
export type SealPurpose = "reasoning" | "web_search_hit" | "web_fetch_page" | "compaction";

const PREFIX = "frv1.";
const NONCE_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** Derived keys per (secret, tenant); bounded so a flood of tenants cannot grow it without limit. */
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 1024;

function tenantKey(secret: string, tenant: string, purpose: SealPurpose): Promise<CryptoKey> {
  const cacheKey = `${secret}\u0000${purpose}\u0000${tenant}`;
  let key = keys.get(cacheKey);
  if (!key) {
    if (keys.size >= MAX_KEYS) keys.clear();
    key = crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]).then((base) =>
      crypto.subtle.deriveKey(
        {
          name: "HKDF",
          hash: "SHA-256",
          salt: encoder.encode(`frontier ${purpose} v1`),
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

function additionalData(tenant: string, purpose: SealPurpose): Uint8Array<ArrayBuffer> {
  return new Uint8Array(encoder.encode(`${purpose}\u0000${tenant}`));
}

export async function sealText(secret: string, tenant: string, purpose: SealPurpose, text: string): Promise<string> {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: nonce, additionalData: additionalData(tenant, purpose) },
    await tenantKey(secret, tenant, purpose),
    encoder.encode(text),
  );
  const all = new Uint8Array(NONCE_BYTES + sealed.byteLength);
  all.set(nonce);
  all.set(new Uint8Array(sealed), NONCE_BYTES);
  return PREFIX + toBase64Url(all);
}

/** The exact sealed text, or undefined for anything Frontier did not seal for this tenant and purpose. */
export async function openText(
  secret: string,
  tenant: string,
  purpose: SealPurpose,
  blob: string,
): Promise<string | undefined> {
  if (!blob.startsWith(PREFIX)) return undefined;
  const bytes = fromBase64Url(blob.slice(PREFIX.length));
  if (!bytes || bytes.length < NONCE_BYTES + 16) return undefined;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, NONCE_BYTES), additionalData: additionalData(tenant, purpose) },
      await tenantKey(secret, tenant, purpose),
      bytes.subarray(NONCE_BYTES),
    );
    return decoder.decode(plain);
  } catch {
    return undefined;
  }
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The bytes of canonical unpadded base64url, else undefined: another spelling of the same bytes
 * (padding, non-zero bits in the last character's unused low bits) is refused, so each blob has one
 * wire form.
 */
function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return toBase64Url(out) === text ? out : undefined;
  } catch {
    return undefined;
  }
}
