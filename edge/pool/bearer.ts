/**
 * Bearer secrets the edge checks (admin and pool tokens): only their SHA-256 is configured; the
 * presented token's digest is compared in constant time. Tokens are never logged.
 */
import { sha256Hex } from "../auth.ts";
import type { RequestContext } from "../context.ts";
import { ApiError } from "../errors.ts";

/** Every `/admin/…` route: `Authorization: Bearer <admin token>` (its SHA-256 is ADMIN_TOKEN_SHA256). */
export async function requireAdmin(request: Request, rc: RequestContext): Promise<void> {
  if (!(await bearerMatches(request.headers, rc.config.adminTokenHash))) {
    throw new ApiError("authentication_error", "A valid admin token is required (Authorization: Bearer <token>)");
  }
}

export async function bearerMatches(headers: Headers, expectedSha256: string | undefined): Promise<boolean> {
  if (expectedSha256 === undefined) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  const digest = await sha256Hex(match?.[1] ?? "");
  return match !== null && constantTimeEqual(digest, expectedSha256);
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
