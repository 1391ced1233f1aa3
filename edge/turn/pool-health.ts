/**
 * Every pool member not known to be down, asked for its Health at once: what `/healthz` reports and
 * what the Codex model catalog is built from (the served model's context size and chat format).
 */
import type { HealthResponse } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { EdgeConfig } from "../config/config.ts";
import { poolView } from "../pool/pool-client.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { workerScope } from "../worker/worker-capability.ts";
import { workerClient } from "../worker/worker-client.ts";
import { rpcErrorToApiError } from "../worker/worker-errors.ts";
import { workerCallHeaders } from "./worker-identity.ts";

const HEALTH_TIMEOUT_MS = 2000;

/** One member's answer, or why it could not be asked. */
export type MemberHealth = { url: string; health: HealthResponse } | { url: string; error: string };

export async function askPoolHealth(env: PoolBindings, config: EdgeConfig): Promise<MemberHealth[]> {
  const members = (await poolView(env, config)).filter((w) => w.state !== "down").map((w) => w.url);
  return Promise.all(
    members.map(async (url): Promise<MemberHealth> => {
      try {
        const headers = await workerCallHeaders(env, config, url, workerScope("health"));
        const health = await workerClient(url, config.workerToken).health(
          {},
          { timeoutMs: HEALTH_TIMEOUT_MS, headers },
        );
        return { url, health };
      } catch (error) {
        return { url, error: rpcErrorToApiError(error).message };
      }
    }),
  );
}
