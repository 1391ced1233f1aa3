/**
 * The worker's operations listener (off unless FRONTIER_METRICS_PORT is set), separate from the
 * gRPC listeners and never behind the public edge:
 *   GET /metrics   Prometheus text; needs `Authorization: Bearer <FRONTIER_METRICS_TOKEN>`
 *   GET /healthz   liveness: 200 while the process serves requests
 *   GET /readyz    readiness, the Health RPC's answer: 200 `{"ready":true,…}`, 503 while draining
 * The probes carry no token and reveal only what Health does (worker id, model name).
 */
import { timingSafeEqual } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { log } from "../log.ts";
import type { WorkerMetrics } from "./worker-metrics.ts";

/** The listener's paths (the deployment files' probes and scrape configs use these). */
export const OPS_PATHS = { metrics: "/metrics", live: "/healthz", ready: "/readyz" } as const;

export interface OpsHealth {
  ready: boolean;
  workerId: string;
  modelName: string;
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

export async function startOpsServer(
  options: { host: string; port: number; metricsToken: string },
  metrics: WorkerMetrics,
  health: () => OpsHealth,
): Promise<OpsServer> {
  const expected = Buffer.from(`Bearer ${options.metricsToken}`);
  const authorized = (header: string | undefined): boolean => {
    const given = Buffer.from(header ?? "");
    return options.metricsToken !== "" && given.length === expected.length && timingSafeEqual(given, expected);
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, "text/plain", "method not allowed\n");
    switch (path) {
      case OPS_PATHS.live:
        return send(res, 200, "text/plain", "ok\n");
      case OPS_PATHS.ready: {
        const state = health();
        return send(res, state.ready ? 200 : 503, "application/json", `${JSON.stringify(state)}\n`);
      }
      case OPS_PATHS.metrics:
        if (!authorized(req.headers.authorization)) {
          res.setHeader("www-authenticate", 'Bearer realm="frontier-worker-metrics"');
          return send(res, 401, "text/plain", "missing or wrong metrics token\n");
        }
        metrics.scrape().then(
          ({ contentType, body }) => send(res, 200, contentType, body),
          (error: unknown) => {
            log("metrics scrape failed", { error: String(error) });
            send(res, 500, "text/plain", "scrape failed\n");
          },
        );
        return;
      default:
        return send(res, 404, "text/plain", "not found\n");
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  res.end(body);
}
