/**
 * Local development (`FRONTIER_DEV=1`) accepts public secrets, so it serves loopback clients only. A
 * Worker cannot see the address it is bound to; it sees the client's: `CF-Connecting-IP`, which
 * Cloudflare sets on every request (clients cannot override it) and workerd/wrangler dev set from the
 * socket. A dev-mode edge deployed, or bound off loopback (`wrangler dev --ip 0.0.0.0`) and reached
 * from another host, answers 403 naming the setting instead of serving with public secrets. (Local
 * workerd can be lied to: a client that sends its own `CF-Connecting-IP: 127.0.0.1` passes, which is
 * why `npm run edge` and the stack bind 127.0.0.1 only.)
 */
import { DEV_MODE_FLAG, isLoopbackHost } from "../../shared/dev-secrets.ts";
import { ApiError } from "../core/errors.ts";
import { log } from "../core/log.ts";

export function refuseDevOffLoopback(request: Request, config: { dev: boolean }): void {
  if (!config.dev) return;
  const client = request.headers.get("cf-connecting-ip");
  if (client === null || client === "" || isLoopbackHost(client)) return;
  log("dev edge refused a non-loopback client", { path: new URL(request.url).pathname });
  throw new ApiError(
    "permission_error",
    `This edge runs with ${DEV_MODE_FLAG}=1 (public development secrets) and serves loopback clients only; unset ${DEV_MODE_FLAG} and configure real secrets to serve others`,
  );
}
