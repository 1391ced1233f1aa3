/**
 * The public development defaults of every secret. They are valid only in local development
 * (`FRONTIER_DEV=1`, which `npm start`, the tests and the bench set through scripts/stack.ts): outside
 * it the edge refuses every request and the worker refuses to start when one of them is configured.
 * Deployments set their own secrets (README "Configuration").
 */

/** The environment flag (worker) / var (edge) that allows the development defaults. */
export const DEV_MODE_FLAG = "FRONTIER_DEV";

/**
 * The edge's development ID_SECRET: the root of the IDs it mints, the per-session ID keys, the
 * tenant data keys and each worker's capability key. It stays at the edge: a development worker
 * derives only its own FRONTIER_CAPABILITY_KEY from it (HMAC(.., "frontier/worker/" + id)).
 */
export const DEV_ID_SECRET = "frontier-dev-id-secret-change-me";
/** The bearer token the workers require (edge WORKER_TOKEN = worker FRONTIER_WORKER_TOKEN). */
export const DEV_WORKER_TOKEN = "frontier-dev-worker-token-change-me";
/** The pool registration token every development worker shares (edge POOL_TOKEN_SHA256 is its digest). */
export const DEV_POOL_TOKEN = "frontier-dev-pool-token-change-me";
/** The admin bearer token (edge ADMIN_TOKEN_SHA256 is its digest). */
export const DEV_ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
/** The local API key (tenant `local`). */
export const DEV_API_KEY = "sk-frontier-local";

/** SHA-256 hex digests of the development tokens, as the edge is configured with them. */
export const DEV_DIGESTS = {
  pool: "d83bfe6e058802a48d8f24e784c9039cbe6464dfc6f23e19525d0605bf807a54",
  admin: "41371453eedb0c9d1fefb5ff4366ce654511c28f1f5792bc38abbc0e96f2b212",
  apiKey: "c383444890ea30a3256c522f6be0b5afb155931118fb6a399ef4c61c5a89784a",
} as const;

/**
 * Local development is loopback only (its secrets are public): 127.0.0.0/8, ::1 (bracketed or not,
 * IPv4-mapped loopback too) and `localhost`. `0.0.0.0` and `::` (every interface) are not loopback.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  return /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Words operators leave in place of a secret (compared after folding: lowercase, letters and digits only). */
const PLACEHOLDER_WORDS = new Set([
  "secret",
  "password",
  "passwd",
  "token",
  "apikey",
  "key",
  "test",
  "dev",
  "default",
  "admin",
  "none",
  "null",
  "undefined",
  "empty",
  "example",
  "sample",
  "dummy",
  "fake",
  "foo",
  "bar",
  "foobar",
  "abc123",
  "qwerty",
  "letmein",
  "todo",
  "fixme",
  "tbd",
]);
/** Phrases that mark a placeholder wherever they appear in the folded value. */
const PLACEHOLDER_PHRASE =
  /changeme|replaceme|changethis|placeholder|yoursecret|yourtoken|yourkey|yourapikey|yourpassword|insert.*here|goeshere|puthere|fillmein|redacted/;
/** Template markers left unexpanded: `<secret>`, `${TOKEN}`, `{{ token }}`. */
const TEMPLATE_MARKER = /[<>]|\$\{|\{\{|\}\}/;
const SEQUENCES = ["0123456789".repeat(8), "abcdefghijklmnopqrstuvwxyz".repeat(3)];

/** Lowercase letters and digits only: `Frontier_Dev-ID secret` and `frontier-dev-id-secret` fold alike. */
export function foldSecret(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9]/g, "");
}

const DEV_FOLDED = new Set(
  [DEV_ID_SECRET, DEV_WORKER_TOKEN, DEV_POOL_TOKEN, DEV_ADMIN_TOKEN, DEV_API_KEY].map(foldSecret),
);

/**
 * Why `value` cannot be a deployment's secret, or undefined when it can: a public development
 * default in any spelling (case, separators, whitespace), a placeholder ("changeme", "<secret>",
 * "xxxxxxxx…", "your-token-here", "${TOKEN}"), or a value with whitespace at either end (a pasted
 * newline: the other side's copy rarely has it). Only outside local development.
 */
export function secretProblem(value: string): string | undefined {
  const folded = foldSecret(value);
  if (DEV_FOLDED.has(folded)) return "is a public development default (in another spelling)";
  if (value !== value.trim()) return "has whitespace at its start or end";
  if (TEMPLATE_MARKER.test(value))
    return "looks like an unexpanded template placeholder (<secret>, {{token}}, a $-brace)";
  if (folded === "" || /^(.)\1*$/.test(folded)) return "looks like a placeholder (one character repeated)";
  if (PLACEHOLDER_WORDS.has(folded) || PLACEHOLDER_PHRASE.test(folded)) return "looks like a placeholder";
  if (SEQUENCES.some((run) => run.includes(folded))) return "looks like a placeholder (a run of digits or letters)";
  return undefined;
}

/**
 * Tokens whose SHA-256 a deployment must not configure (ADMIN_TOKEN_SHA256, API_KEYS,
 * POOL_WORKER_TOKENS): the development tokens in the spellings a client can send or `echo | sha256sum`
 * produces (upper case, a trailing newline), and common placeholders. PUBLIC_TOKEN_DIGESTS holds
 * their digests (test/unit/shared/dev-secret-variants.test.ts recomputes them).
 */
export function publicTokenVariants(): string[] {
  const tokens = [DEV_POOL_TOKEN, DEV_ADMIN_TOKEN, DEV_API_KEY];
  const words = ["changeme", "change-me", "secret", "password", "token", "admin", "your-token-here", "<secret>", "xxx"];
  return [...tokens.flatMap((t) => [t, `${t}\n`, t.toUpperCase()]), ...words.flatMap((w) => [w, `${w}\n`])];
}

export const PUBLIC_TOKEN_DIGESTS: ReadonlySet<string> = new Set([
  "d83bfe6e058802a48d8f24e784c9039cbe6464dfc6f23e19525d0605bf807a54",
  "0bcd22b13693940e2ef598bd1ad69f3c249789120336d4cd587d20c328d74ee7",
  "8a4237e5c0a6ce02e682dc0bbebded32fe224fc73a0b9fcd7d3986debc185c63",
  "41371453eedb0c9d1fefb5ff4366ce654511c28f1f5792bc38abbc0e96f2b212",
  "610a40eb3976b8a3df27be24b1d6dc8817e726924daf7e26e9d68090f64ba6cc",
  "28d311c424f3f119a1b4e99c668d12a42da6cea212997e6ec2192c82133883c8",
  "c383444890ea30a3256c522f6be0b5afb155931118fb6a399ef4c61c5a89784a",
  "221a17a24d265b7282c1a377e4f2c18d105f4bd4e7319e61d1a53fe2a18db27b",
  "e7051a4b7fdc088a27c71a00539ff232fb5d4186905dcecff07b0ae1a42252ee",
  "057ba03d6c44104863dc7361fe4578965d1887360f90a0895882e58a6248fc86",
  "41edf6e61ed42a3c6848b0ae91ddc5662377c09a3ed38fcd9f9e82664294bcfd",
  "e2186dbdb1bb4193608605e84f33208765b5693b55edd4f730a719a100eeea6f",
  "5e67511e20259f41b63f1ab9e2de66fa25360ca76f30e40e82a0c3d1af3cbee6",
  "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b",
  "b37e50cedcd3e3f1ff64f4afc0422084ae694253cf399326868e07a35f4a45fb",
  "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
  "6b3a55e0261b0304143f805a24924d0c1c44524821305f31d9277843b8a10f4e",
  "3c469e9d6c5875d37a43f353d4f88e61fcf812c66eee3457465a40b0da4153e0",
  "e078cb80a315c1545d5396567810bf94dc360f30bfdaae14ca6aad6cf9fe768d",
  "8c6976e5b5410415bde908bd4dee15dfb167a9c873fc4bb8a81f6f2ab448a918",
  "fc8252c8dc55839967c58b9ad755a59b61b67c13227ddae4bd3f78a38bf394f7",
  "903f318364565ce8b92bcafc40c5e70bd2a24048e155fcdad2e9c67fe85a9711",
  "a357f318ceb2179014884d746bde145d444c9d4f891e443e145fa81f01323081",
  "bcd2013787a29e98c30c9562a7bdd64c8df3cd88d5dc99fd2008ce4053b6af10",
  "b3da50142e54fd58e54318f9130359ad57fdd1081b58f0e61adb09bc2d81c168",
  "cd2eb0837c9b4c962c22d2ff8b5441b7b45805887f051d39bf133b583baf6860",
  "042aea10a0f14f2d391373599be69d53a75dde9951fc3d3cd10b6100aa7a9f24",
]);
