/**
 * Worker registration is authenticated per worker and limited to allowed endpoints: a worker's own
 * token (POOL_WORKER_TOKENS) registers only its own id, and a URL outside POOL_ALLOWED_WORKER_URLS
 * is refused whatever the token.
 */
import { describe, expect, it } from "vitest";
import { DEV_POOL_TOKEN } from "../../shared/dev-secrets.ts";
import { call } from "./helpers.ts";

const OWN_TOKEN = "token-of-worker-bound";

function heartbeat(id: string, url: string, token: string): Promise<Response> {
  return call("/internal/pool/heartbeat", {
    method: "POST",
    key: null,
    headers: { authorization: `Bearer ${token}` },
    body: {
      id,
      region: "local",
      url,
      boot: "boot1",
      model_identity: "m",
      sequences_total: 1,
      sequences_free: 1,
      queue_depth: 0,
      active_requests: 0,
      resident_sessions: 0,
      prefixes: [],
      draining: false,
      leaving: true,
    },
  });
}

describe("worker registration", () => {
  it("a worker's own token registers its own id only", async () => {
    expect((await heartbeat("worker-bound", "http://10.0.9.1:1", OWN_TOKEN)).status).toBe(200);
    const other = await heartbeat("worker-other", "http://10.0.9.2:1", OWN_TOKEN);
    expect(other.status).toBe(401);
    expect(((await other.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
    expect((await heartbeat("worker-bound", "http://10.0.9.1:1", "wrong-token")).status).toBe(401);
  });

  it("refuses a URL outside POOL_ALLOWED_WORKER_URLS, whatever the token", async () => {
    for (const [id, token] of [
      ["worker-bound", OWN_TOKEN],
      ["w-rogue", DEV_POOL_TOKEN],
    ] as const) {
      for (const url of ["http://192.168.1.10:1", "http://attacker.example:80", "http://169.254.169.254"]) {
        const res = await heartbeat(id, url, token);
        expect(res.status).toBe(403);
        const body = (await res.json()) as { error: { type: string; message: string } };
        expect(body.error.type).toBe("permission_error");
        expect(body.error.message).toContain("POOL_ALLOWED_WORKER_URLS");
      }
    }
  });
});
