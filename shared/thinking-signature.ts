/**
 * Signatures on thinking blocks Frontier returns: an HMAC over (tenant, text), so a signature
 * proves Frontier produced exactly this thinking for this tenant.
 */
const encoder = new TextEncoder();

export async function signThinking(secret: string, tenant: string, thinking: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`thinking\u0000${tenant}\u0000${thinking}`));
  let binary = "";
  for (const b of new Uint8Array(mac)) binary += String.fromCharCode(b);
  return `frontier.v1.${btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}
