/**
 * Self-routing, unforgeable IDs.
 *
 * Every ID Frontier mints (`toolu_…`, `msg_…`, `resp_…`, `call_…`, the Responses API's item IDs
 * `fc_…` and `rs_…`, and Chat Completions' `chatcmpl-…`) carries the session it belongs to and a
 * keyed MAC over (kind, session, nonce). The MAC key is the session's own ID key, derived by the edge
 * from its secret, the tenant and the session (`sessionIdKey`): the edge finds the SessionDO from the
 * ID alone and checks it with the key it derives again, and a GPU worker is handed only the key of
 * the session it runs (GenerateRequest.session_id_key), so a stolen worker mints IDs for the sessions
 * the edge sent it and no other. An ID minted for another tenant, or forged, fails verification and
 * is treated exactly like an unknown ID. Works in Node and workerd (WebCrypto only).
 */

export type IdKind = "toolu" | "msg" | "resp" | "call" | "fc" | "rs" | "sig" | "chatcmpl" | "srvtoolu" | "ws";

/** 2: the MAC is keyed by the session's ID key (1 keyed it by the edge's secret itself). */
const VERSION = 2;
const SESSION_BYTES = 16;
const NONCE_BYTES = 6;
const MAC_BYTES = 12;
const PAYLOAD_BYTES = 1 + SESSION_BYTES + NONCE_BYTES;
const ID_KINDS: readonly IdKind[] = ["toolu", "msg", "resp", "call", "fc", "rs", "sig", "chatcmpl", "srvtoolu", "ws"];
/** OpenAI spells its completion IDs `chatcmpl-…`; every other kind uses `_`. */
const ID_PATTERN = /^(?:(toolu|msg|resp|call|fc|rs|sig|srvtoolu|ws)_|(chatcmpl)-)([A-Za-z0-9_-]{47})$/;

function prefixOf(kind: IdKind): string {
  return kind === "chatcmpl" ? "chatcmpl-" : `${kind}_`;
}

const encoder = new TextEncoder();
const SESSION_KEY_LABEL = "frontier/session-ids/v1";
const masterKeys = new Map<string, Promise<CryptoKey>>();
/** Session MAC keys recently used, by master, tenant and session (bounded: oldest dropped first). */
const sessionKeys = new Map<string, Promise<CryptoKey>>();
const SESSION_KEY_CACHE = 1024;

function masterKey(secret: string): Promise<CryptoKey> {
  let key = masterKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    masterKeys.set(secret, key);
  }
  return key;
}

/**
 * The key every ID of `session` (of `tenant`) is MACed with: HMAC-SHA256(secret, label ‖ tenant ‖
 * session), 32 bytes. The edge derives it; a worker gets it only for the session it runs.
 */
export async function sessionIdKey(secret: string, tenant: string, session: string): Promise<Uint8Array> {
  const message = encoder.encode(`${SESSION_KEY_LABEL}\u0000${tenant}\u0000${session}`);
  return new Uint8Array(await crypto.subtle.sign("HMAC", await masterKey(secret), message));
}

function importSessionKey(raw: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", Uint8Array.from(raw), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

function derivedSessionKey(secret: string, tenant: string, session: string): Promise<CryptoKey> {
  const cacheKey = `${secret}\u0000${tenant}\u0000${session}`;
  let key = sessionKeys.get(cacheKey);
  if (key) {
    sessionKeys.delete(cacheKey);
  } else {
    key = sessionIdKey(secret, tenant, session).then(importSessionKey);
    key.catch(() => sessionKeys.delete(cacheKey));
  }
  sessionKeys.set(cacheKey, key);
  if (sessionKeys.size > SESSION_KEY_CACHE) {
    const oldest = sessionKeys.keys().next().value;
    if (oldest !== undefined) sessionKeys.delete(oldest);
  }
  return key;
}

async function mac(key: CryptoKey, kind: IdKind, payload: Uint8Array): Promise<Uint8Array> {
  const header = encoder.encode(`${kind}\u0000`);
  const message = new Uint8Array(header.length + payload.length);
  message.set(header);
  message.set(payload, header.length);
  const signature = await crypto.subtle.sign("HMAC", key, message);
  return new Uint8Array(signature, 0, MAC_BYTES);
}

/** True when `text` is spelled like an ID Frontier mints (its MAC is not checked: `verifyId` does that). */
export function isIdSyntax(text: string): boolean {
  return ID_PATTERN.test(text);
}

export function isIdKind(value: string): value is IdKind {
  return (ID_KINDS as readonly string[]).includes(value);
}

/** A new random session id (32 hex chars). */
export function newSessionId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(SESSION_BYTES)));
}

export function isSessionId(value: string): boolean {
  return /^[0-9a-f]{32}$/.test(value);
}

/** Mint an ID of `kind` for `session` of `tenant` (the edge, which holds `secret`). */
export async function mintId(secret: string, kind: IdKind, tenant: string, session: string): Promise<string> {
  if (!isSessionId(session)) throw new Error("mintId: session must be 32 hex chars");
  return mintWith(await derivedSessionKey(secret, tenant, session), kind, session);
}

/** Mint an ID of `kind` for `session` with that session's ID key (a worker: `sessionIdKey` from the edge). */
export async function mintIdWithSessionKey(sessionKey: Uint8Array, kind: IdKind, session: string): Promise<string> {
  if (!isSessionId(session)) throw new Error("mintId: session must be 32 hex chars");
  if (sessionKey.length !== 32) throw new Error("mintId: a session ID key is 32 bytes");
  return mintWith(await importSessionKey(sessionKey), kind, session);
}

async function mintWith(key: CryptoKey, kind: IdKind, session: string): Promise<string> {
  const payload = new Uint8Array(PAYLOAD_BYTES);
  payload[0] = VERSION;
  payload.set(fromHex(session), 1);
  payload.set(crypto.getRandomValues(new Uint8Array(NONCE_BYTES)), 1 + SESSION_BYTES);
  const tag = await mac(key, kind, payload);
  const all = new Uint8Array(PAYLOAD_BYTES + MAC_BYTES);
  all.set(payload);
  all.set(tag, PAYLOAD_BYTES);
  return `${prefixOf(kind)}${toBase64Url(all)}`;
}

export interface DecodedId {
  kind: IdKind;
  session: string;
}

/**
 * Verify an ID for `tenant`. Returns undefined for anything malformed, forged or minted for another
 * tenant: callers must not distinguish these cases from an unknown ID.
 */
export async function verifyId(secret: string, id: string, tenant: string): Promise<DecodedId | undefined> {
  const match = ID_PATTERN.exec(id);
  if (!match) return undefined;
  const kind = (match[1] ?? match[2]) as IdKind;
  const bytes = fromBase64Url(match[3] ?? "");
  if (!bytes || bytes.length !== PAYLOAD_BYTES + MAC_BYTES || bytes[0] !== VERSION) return undefined;
  const payload = bytes.subarray(0, PAYLOAD_BYTES);
  const session = toHex(payload.subarray(1, 1 + SESSION_BYTES));
  const expected = await mac(await derivedSessionKey(secret, tenant, session), kind, payload);
  if (!constantTimeEqual(expected, bytes.subarray(PAYLOAD_BYTES))) return undefined;
  return { kind, session };
}

function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Canonical base64url only: the last character's unused bits must be zero, so one ID has one spelling. */
function fromBase64Url(text: string): Uint8Array | undefined {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return toBase64Url(out) === text ? out : undefined;
  } catch {
    return undefined;
  }
}
