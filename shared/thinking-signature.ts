/**
 * Signatures on thinking blocks Frontier returns. A replayed thinking block whose signature
 * verifies was produced by Frontier for this tenant with exactly this text.
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

export async function verifyThinking(
  secret: string,
  tenant: string,
  thinking: string,
  signature: string,
): Promise<boolean> {
  const expected = await signThinking(secret, tenant, thinking);
  if (expected.length !== signature.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ signature.charCodeAt(i);
  return diff === 0;
}
