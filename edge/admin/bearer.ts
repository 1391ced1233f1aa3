/**
 * Bearer secrets the edge checks (admin and pool tokens): only their SHA-256 is configured; the
 * presented token's digest is compared in constant time. Tokens are never logged.
 */

import { ApiError } from "../core/errors.ts";
import type { RequestContext } from "../http/context.ts";
import { sha256Hex } from "../tenancy/auth.ts";
import { isStateChanging, refuseCrossSite } from "./cross-site.ts";

/**
 * Every `/admin/…` route: first the cross-site guard (cross-site.ts), then the admin token (its SHA-256
 * is ADMIN_TOKEN_SHA256) as `Authorization: Bearer <token>`. Reads (GET/HEAD) also take it as the
 * password of HTTP Basic auth (any user name) so that a browser can open the status page (the 401
 * of a read asks for Basic credentials); a state-changing route takes the Bearer header only, which
 * no browser attaches on its own.
 */
export async function requireAdmin(
  request: Request,
  rc: RequestContext<unknown>,
  options: { page?: boolean } = {},
): Promise<void> {
  refuseCrossSite(request, options);
  const expected = rc.config.adminTokenHash;
  const write = isStateChanging(request);
  const basic = write ? undefined : basicPassword(request.headers);
  const ok =
    basic === undefined
      ? await bearerMatches(request.headers, expected)
      : expected !== undefined && constantTimeEqual(await sha256Hex(basic), expected);
  if (!ok) {
    throw new ApiError(
      "authentication_error",
      "A valid admin token is required (Authorization: Bearer <token>)",
      write ? {} : { headers: { "www-authenticate": 'Basic realm="frontier-admin", charset="UTF-8"' } },
    );
  }
}

/** The password of `Authorization: Basic base64(user:password)`, if that is the scheme. */
function basicPassword(headers: Headers): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(headers.get("authorization") ?? "");
  if (!match?.[1]) return undefined;
  try {
    const decoded = new TextDecoder().decode(Uint8Array.from(atob(match[1]), (c) => c.charCodeAt(0)));
    const colon = decoded.indexOf(":");
    return colon < 0 ? undefined : decoded.slice(colon + 1);
  } catch {
    return undefined;
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
