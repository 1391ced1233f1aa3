/**
 * Bearer secrets the edge checks (admin and pool tokens): only their SHA-256 is configured; the
 * presented token's digest is compared in constant time. Tokens are never logged.
 */
import { sha256Hex } from "../tenancy/auth.ts";

/** The token of `Authorization: Bearer <token>`, if that is the scheme. */
export function bearerToken(headers: Headers): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "")?.[1];
}

/** The password of `Authorization: Basic base64(user:password)`, if that is the scheme. */
export function basicPassword(headers: Headers): string | undefined {
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
  const token = bearerToken(headers);
  return token !== undefined && tokenMatches(token, expectedSha256);
}

/** The token's SHA-256 is `expectedSha256` (compared in constant time). */
export async function tokenMatches(token: string, expectedSha256: string | undefined): Promise<boolean> {
  return expectedSha256 !== undefined && constantTimeEqual(await sha256Hex(token), expectedSha256);
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
