import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { WorkerService } from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import { LIMITS } from "../shared/limits.ts";
import { authenticateFirst } from "./auth-gate.ts";

/**
 * Largest request message the worker reads unless configured (FRONTIER_MAX_MESSAGE_MB): twice the
 * edge's largest request body; the conversation it carries is about the size of that JSON.
 */
const DEFAULT_MAX_MESSAGE_BYTES = 2 * LIMITS.maxBodyBytes;

export interface RunningServer {
  grpcPort: number;
  httpPort: number;
  close(): Promise<void>;
}

export interface ServerOptions {
  host: string;
  grpcPort: number;
  httpPort: number;
  /** Every request must carry `authorization: Bearer <worker token>`, checked before its body is read. */
  workerToken: string;
  /** Every request must carry a capability signed with this worker's own key, naming `workerId` (auth-gate.ts). */
  capabilityKey: Uint8Array;
  workerId: string;
  /** Largest request message (default DEFAULT_MAX_MESSAGE_BYTES); larger: RESOURCE_EXHAUSTED. */
  maxMessageBytes?: number | undefined;
}

/**
 * Serve WorkerService on two listeners sharing one handler: h2c for native gRPC clients and
 * HTTP/1.1 for gRPC-Web/Connect (workerd cannot speak HTTP/2). Port 0 picks a free port. The
 * token is checked from the headers before connect reads anything (auth-gate.ts); messages are
 * read only up to `maxMessageBytes`, and compressed requests are refused (no client compresses,
 * and an inflating body is work done before any limit could see its size).
 */
export async function startServer(
  impl: ServiceImpl<typeof WorkerService>,
  options: ServerOptions,
): Promise<RunningServer> {
  const connect = connectNodeAdapter({
    routes: (router) => router.service(WorkerService, impl),
    readMaxBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    acceptCompression: [],
  });
  const capabilities = { key: options.capabilityKey, workerId: options.workerId };
  const handler = authenticateFirst(options.workerToken, capabilities, connect);
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
