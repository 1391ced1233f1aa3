/**
 * Per-request capabilities: what one edge → worker call may do, signed by the edge.
 *
 * Every call to a GPU worker carries one in the `x-frontier-capability` header, so the worker checks
 * it before it reads a byte of the body (gpu-worker/auth-gate.ts), and again, once the body is
 * parsed, against the tenant and session the body names (gpu-worker/capability-check.ts). It names
 * the worker it is for, the tenant, the session (`"none"` for calls about no session), the operations
 * allowed and an expiry. Its MAC is keyed by that worker's own key, `workerKey(master, workerId)`
 * = HMAC-SHA256(master, "frontier/worker/" ‖ workerId): the edge derives it from its master secret
 * (ID_SECRET), the worker is configured with only its derived key (FRONTIER_CAPABILITY_KEY). So the
 * worker token alone reaches nobody's session, and one worker's key signs nothing another worker
 * accepts: a stolen worker can call no other worker for any tenant.
 *
 * Wire form: `v1.<base64url(JSON payload)>.<base64url(HMAC-SHA256(key, "v1." + payload part))>`.
 * WebCrypto only here (the edge signs in workerd); the worker verifies with node:crypto.
 */

export const CAPABILITY_HEADER = "x-frontier-capability";
/** The `tenant` / `session` of a capability for calls about no tenant or no session. */
export const NO_SCOPE = "none";
const VERSION = "v1";
/** The label a worker's key is derived under: HMAC-SHA256(master, label ‖ worker id). */
export const WORKER_KEY_LABEL = "frontier/worker/";

export type CapabilityOp = "generate" | "count_tokens" | "release_session" | "health" | "stats" | "drain";
const OPS: readonly CapabilityOp[] = ["generate", "count_tokens", "release_session", "health", "stats", "drain"];

export interface Capability {
  /** The worker id it is for. */
  worker: string;
  tenant: string;
  session: string;
  ops: CapabilityOp[];
  /** Unix seconds after which it is refused. */
  expires: number;
}

interface WirePayload {
  w: string;
  t: string;
  s: string;
  o: string[];
  e: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function hmac(key: Uint8Array | string, message: string): Promise<Uint8Array> {
  const raw = typeof key === "string" ? encoder.encode(key) : Uint8Array.from(key);
  const imported = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, encoder.encode(message)));
}

/** The worker's own capability key (32 bytes) from the edge's master secret. */
export function workerKey(master: string, workerId: string): Promise<Uint8Array> {
  return hmac(master, `${WORKER_KEY_LABEL}${workerId}`);
}

/** The signed header value for `capability`, MACed with the worker's key. */
export async function signCapability(key: Uint8Array, capability: Capability): Promise<string> {
  const payload: WirePayload = {
    w: capability.worker,
    t: capability.tenant,
    s: capability.session,
    o: capability.ops,
    e: capability.expires,
  };
  const body = `${VERSION}.${toBase64Url(encoder.encode(JSON.stringify(payload)))}`;
  return `${body}.${toBase64Url(await hmac(key, body))}`;
}

/** The parts of a header value: the signed text, its MAC and the decoded payload; undefined when malformed. */
export function parseCapability(
  value: string,
): { signed: string; mac: Uint8Array; capability: Capability } | undefined {
  const parts = value.split(".");
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  const payloadBytes = fromBase64Url(parts[1] ?? "");
  const mac = fromBase64Url(parts[2] ?? "");
  if (!payloadBytes || !mac || mac.length !== 32) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(payloadBytes));
  } catch {
    return undefined;
  }
  const capability = capabilityFrom(raw);
  return capability ? { signed: `${parts[0]}.${parts[1]}`, mac, capability } : undefined;
}

function capabilityFrom(raw: unknown): Capability | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const { w, t, s, o, e } = raw as Partial<Record<keyof WirePayload, unknown>>;
  if (typeof w !== "string" || typeof t !== "string" || typeof s !== "string") return undefined;
  if (!Array.isArray(o) || !o.every(isOp) || typeof e !== "number" || !Number.isInteger(e)) return undefined;
  return { worker: w, tenant: t, session: s, ops: o, expires: e };
}

function isOp(value: unknown): value is CapabilityOp {
  return typeof value === "string" && (OPS as readonly string[]).includes(value);
}

export type CapabilityRefusal = "malformed" | "bad-mac" | "expired" | "wrong-worker";

/** Check a header value with the worker's key (WebCrypto; the worker's gate uses node:crypto). */
export async function verifyCapability(
  key: Uint8Array,
  value: string,
  expect: { worker: string; nowSeconds: number },
): Promise<Capability | CapabilityRefusal> {
  const parsed = parseCapability(value);
  if (!parsed) return "malformed";
  if (!constantTimeEqual(await hmac(key, parsed.signed), parsed.mac)) return "bad-mac";
  return capabilityRefusal(parsed.capability, expect) ?? parsed.capability;
}

/** What is wrong with a capability whose MAC verified, or undefined when it is valid here and now. */
export function capabilityRefusal(
  capability: Capability,
  expect: { worker: string; nowSeconds: number },
): CapabilityRefusal | undefined {
  if (capability.expires < expect.nowSeconds) return "expired";
  if (capability.worker !== expect.worker) return "wrong-worker";
  return undefined;
}

/** Why a capability does not cover one call (after the body named its tenant and session), or undefined. */
export function scopeRefusal(
  capability: Capability,
  call: { op: CapabilityOp; tenant: string; session: string },
): string | undefined {
  if (!capability.ops.includes(call.op)) return `the capability does not allow ${call.op}`;
  if (capability.tenant !== call.tenant) return "the capability names another tenant";
  if (capability.session !== call.session) return "the capability names another session";
  return undefined;
}

export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

export function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64Url(text: string): Uint8Array | undefined {
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
