import { timingSafeEqual } from "node:crypto";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type Interceptor, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { WorkerService } from "../proto/gen/frontier/worker/v1/worker_pb.ts";

export interface RunningServer {
  grpcPort: number;
  httpPort: number;
  close(): Promise<void>;
}

/**
 * Serve WorkerService on two listeners sharing one handler: h2c for native gRPC clients and
 * HTTP/1.1 for gRPC-Web/Connect (workerd cannot speak HTTP/2). Port 0 picks a free port.
 */
export async function startServer(
  impl: ServiceImpl<typeof WorkerService>,
  options: { host: string; grpcPort: number; httpPort: number; workerToken: string },
): Promise<RunningServer> {
  const handler = connectNodeAdapter({
    routes: (router) => router.service(WorkerService, impl),
    interceptors: [requireToken(options.workerToken)],
  });
  const h2 = http2.createServer(handler);
  const h1 = http.createServer(handler);
  h1.keepAliveTimeout = 60_000;
  // h2 has no closeAllConnections: a client's idle session would hold close() open indefinitely.
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await listen(h2, options.host, options.grpcPort);
  await listen(h1, options.host, options.httpPort);
  return {
    grpcPort: (h2.address() as AddressInfo).port,
    httpPort: (h1.address() as AddressInfo).port,
    async close() {
      h1.closeAllConnections();
      for (const session of sessions) session.destroy();
      await Promise.all([closeServer(h2), closeServer(h1)]);
    },
  };
}

/** Every call must carry `authorization: Bearer <worker token>` (compared in constant time). */
function requireToken(token: string): Interceptor {
  const expected = Buffer.from(`Bearer ${token}`);
  return (next) => async (request) => {
    const given = Buffer.from(request.header.get("authorization") ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ConnectError("missing or wrong worker token", Code.Unauthenticated);
    }
    return next(request);
  };
}

function listen(server: http.Server | http2.Http2Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function closeServer(server: http.Server | http2.Http2Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
