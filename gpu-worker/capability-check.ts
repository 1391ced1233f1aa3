/**
 * The worker's side of the per-request capability (shared/capability.ts). Twice per call:
 * - from the headers, before the body is read (auth-gate.ts): the MAC under this worker's own key
 *   (FRONTIER_CAPABILITY_KEY), the worker id it names, its expiry;
 * - after the body is parsed (service.ts): the operation, tenant and session the call names must be
 *   the ones the capability names, else PERMISSION_DENIED before any state is touched.
 * Synchronous (node:crypto): the gate decides before connect's handler sees the request.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  CAPABILITY_HEADER,
  type Capability,
  type CapabilityOp,
  type CapabilityRefusal,
  capabilityRefusal,
  parseCapability,
  scopeRefusal,
} from "../shared/capability.ts";

/** What the worker checks capabilities with: its own derived key and its id. */
export interface CapabilityVerifier {
  key: Uint8Array;
  workerId: string;
  /** Unix seconds (tests move the clock). */
  now?: () => number;
}

/** The capability in a request's header, verified for this worker now; a refusal otherwise. */
export function verifiedCapability(
  verifier: CapabilityVerifier,
  value: string | undefined | null,
): Capability | CapabilityRefusal | "missing" {
  if (!value) return "missing";
  const parsed = parseCapability(value);
  if (!parsed) return "malformed";
  const expected = createHmac("sha256", verifier.key).update(parsed.signed).digest();
  if (expected.length !== parsed.mac.length || !timingSafeEqual(expected, parsed.mac)) return "bad-mac";
  const nowSeconds = verifier.now?.() ?? Math.floor(Date.now() / 1000);
  return capabilityRefusal(parsed.capability, { worker: verifier.workerId, nowSeconds }) ?? parsed.capability;
}

/** A human-readable reason for a refusal (never echoes the capability itself). */
export function refusalMessage(refusal: CapabilityRefusal | "missing"): string {
  switch (refusal) {
    case "missing":
      return `missing ${CAPABILITY_HEADER}: every call needs a capability signed by the edge`;
    case "malformed":
      return `malformed ${CAPABILITY_HEADER}`;
    case "bad-mac":
      return `${CAPABILITY_HEADER} is not signed with this worker's key`;
    case "expired":
      return `${CAPABILITY_HEADER} has expired`;
    case "wrong-worker":
      return `${CAPABILITY_HEADER} names another worker`;
  }
}

/**
 * Inside a handler, once the body is parsed: the call's capability must allow `op` on exactly this
 * tenant and session (`NO_SCOPE` for calls about none). Throws PERMISSION_DENIED otherwise.
 */
export function requireCapability(
  verifier: CapabilityVerifier,
  header: Headers,
  call: { op: CapabilityOp; tenant: string; session: string },
): Capability {
  const capability = verifiedCapability(verifier, header.get(CAPABILITY_HEADER));
  if (typeof capability === "string") throw new ConnectError(refusalMessage(capability), Code.PermissionDenied);
  const refusal = scopeRefusal(capability, call);
  if (refusal) throw new ConnectError(refusal, Code.PermissionDenied);
  return capability;
}
