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
 *
 * Sealed bytes (`sealBytes`/`openBytes`, for data Frontier keeps at rest rather than hands to a
 * client) use the same keys and layout, raw (no prefix, no base64), and bind one more string, the
 * record's place (`<purpose>\0<tenant>\0<binding>`), so sealed bytes moved to another place do not open.
 */

/** What a sealed blob is for; each purpose has its own key and additional data. */
export type SealPurpose = "reasoning" | "web_search_hit" | "web_fetch_page" | "compaction";
/** What sealed bytes at rest are for (never a purpose a client's blob is opened under). */
export type SealedBytesPurpose = "response_record";
type KeyPurpose = SealPurpose | SealedBytesPurpose;

const PREFIX = "frv1.";
const NONCE_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** Derived keys per (secret, tenant); bounded so a flood of tenants cannot grow it without limit. */
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_KEYS = 1024;

function tenantKey(secret: string, tenant: string, purpose: KeyPurpose): Promise<CryptoKey> {
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

function additionalData(tenant: string, purpose: KeyPurpose, binding?: string): Uint8Array<ArrayBuffer> {
  const tail = binding === undefined ? "" : `\u0000${binding}`;
  return new Uint8Array(encoder.encode(`${purpose}\u0000${tenant}${tail}`));
}

async function seal(key: CryptoKey, ad: Uint8Array<ArrayBuffer>, plain: BufferSource) {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: ad }, key, plain);
  const all = new Uint8Array(NONCE_BYTES + sealed.byteLength);
  all.set(nonce);
  all.set(new Uint8Array(sealed), NONCE_BYTES);
  return all;
}

async function open(key: CryptoKey, ad: Uint8Array<ArrayBuffer>, bytes: Uint8Array<ArrayBuffer>) {
  if (bytes.length < NONCE_BYTES + 16) return undefined;
  try {
    const iv = bytes.subarray(0, NONCE_BYTES);
    return await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: ad }, key, bytes.subarray(NONCE_BYTES));
  } catch {
    return undefined;
  }
}

export async function sealText(secret: string, tenant: string, purpose: SealPurpose, text: string): Promise<string> {
  const key = await tenantKey(secret, tenant, purpose);
  return PREFIX + toBase64Url(await seal(key, additionalData(tenant, purpose), encoder.encode(text)));
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
  if (!bytes) return undefined;
  const plain = await open(await tenantKey(secret, tenant, purpose), additionalData(tenant, purpose), bytes);
  return plain === undefined ? undefined : decodeUtf8(plain);
}

/** `plain` sealed for one tenant, purpose and place: 12-byte nonce ‖ ciphertext ‖ 16-byte tag. */
export async function sealBytes(
  secret: string,
  tenant: string,
  purpose: SealedBytesPurpose,
  binding: string,
  plain: BufferSource,
): Promise<Uint8Array<ArrayBuffer>> {
  return seal(await tenantKey(secret, tenant, purpose), additionalData(tenant, purpose, binding), plain);
}

/** The exact sealed bytes, or undefined for anything not sealed for this tenant, purpose and place. */
export async function openBytes(
  secret: string,
  tenant: string,
  purpose: SealedBytesPurpose,
  binding: string,
  sealed: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const key = await tenantKey(secret, tenant, purpose);
  const plain = await open(key, additionalData(tenant, purpose, binding), sealed);
  return plain === undefined ? undefined : new Uint8Array(plain);
}

function decodeUtf8(bytes: ArrayBuffer): string | undefined {
  try {
    return decoder.decode(bytes);
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
