/** The one function of @cloudflare/vitest-plugin's runner module that the workerd tier's setup uses. */
declare module "cloudflare:test-internal" {
  /** Settles every `ctx.waitUntil` promise the Worker registered (through `exports` or `SELF`). */
  export function waitForGlobalWaitUntil(): Promise<void>;
}
