import { readFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
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
  /** PEM certificate chain and key files: both listeners serve TLS (ALPN h2 and http/1.1). Undefined: plaintext. */
  tls?: TlsFiles | undefined;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/**
 * Serve WorkerService on two listeners sharing one handler: h2c for native gRPC clients and
 * HTTP/1.1 for gRPC-Web/Connect (workerd cannot speak HTTP/2). With `tls` both listeners are TLS
 * and each offers h2 and http/1.1 by ALPN (so the gRPC port also serves gRPC-Web, and the gRPC-Web
 * port also serves gRPC); the files are read once, here. Port 0 picks a free port. The
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
  const credentials = options.tls && {
    cert: readFileSync(options.tls.certFile),
    key: readFileSync(options.tls.keyFile),
  };
  const h2 = credentials ? secureServer(credentials, handler) : http2.createServer(handler);
  const h1 = credentials ? secureServer(credentials, handler) : http.createServer(handler);
  if (h1 instanceof http.Server) h1.keepAliveTimeout = 60_000;
  // http2 servers have no closeAllConnections: a client's idle connection would hold close() open
  // indefinitely, so each http2 listener's sockets are destroyed on close. Their sockets also get
  // TCP_NODELAY, which http.Server sets and they do not: without it a TLS response waits out the
  // client's delayed ACK (about 40 ms a call).
  const sockets = new Set<Socket>();
  for (const server of h1 instanceof http.Server ? [h2] : [h2, h1]) {
    server.on("connection", (socket: Socket) => {
      socket.setNoDelay(true);
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
  }
  await listen(h2, options.host, options.grpcPort);
  await listen(h1, options.host, options.httpPort);
  return {
    grpcPort: (h2.address() as AddressInfo).port,
    httpPort: (h1.address() as AddressInfo).port,
    async close() {
      if (h1 instanceof http.Server) h1.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await Promise.all([closeServer(h2), closeServer(h1)]);
    },
  };
}

type Listener = http.Server | http2.Http2Server | http2.Http2SecureServer;

/**
 * A TLS listener for both gRPC (h2) and gRPC-Web/Connect over HTTP/1.1 (ALPN "http/1.1", as
 * workerd's fetch and a TLS-terminating proxy's upstream may speak): connect-node's handler takes
 * either request type.
 */
function secureServer(
  credentials: { cert: Buffer; key: Buffer },
  handler: ReturnType<typeof authenticateFirst>,
): http2.Http2SecureServer {
  return http2.createSecureServer(
    { ...credentials, allowHTTP1: true, ALPNProtocols: ["h2", "http/1.1"], minVersion: "TLSv1.2" },
    handler,
  );
}

function listen(server: Listener, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function closeServer(server: Listener): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
