/**
 * The worker's listeners close even while a gRPC (h2c) client keeps its HTTP/2 session open: Node's
 * http2 server has no closeAllConnections, and an idle client session used to hold close() forever.
 */
import { createClient, type ServiceImpl } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { startServer } from "../../../gpu-worker/server.ts";
import { StopReason, WorkerService } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CAPABILITY_HEADER, signCapability } from "../../../shared/capability.ts";

const TOKEN = "test-worker-token";
const KEY = new Uint8Array(32).fill(3);

describe("worker gRPC server", () => {
  it("closes while an h2c client's session is still open", async () => {
    const impl: Partial<ServiceImpl<typeof WorkerService>> = {
      async *generate() {
        yield { event: { case: "stop", value: { reason: StopReason.END_TURN } } };
      },
    };
    const server = await startServer(impl as ServiceImpl<typeof WorkerService>, {
      host: "127.0.0.1",
      grpcPort: 0,
      httpPort: 0,
      workerToken: TOKEN,
      capabilityKey: KEY,
      workerId: "w",
    });
    const expires = Math.floor(Date.now() / 1000) + 60;
    const capability = await signCapability(KEY, {
      worker: "w",
      tenant: "t",
      session: "s",
      ops: ["generate"],
      expires,
    });
    const transport = createGrpcTransport({
      baseUrl: `http://127.0.0.1:${server.grpcPort}`,
      interceptors: [
        (next) => (request) => {
          request.header.set("authorization", `Bearer ${TOKEN}`);
          request.header.set(CAPABILITY_HEADER, capability);
          return next(request);
        },
      ],
    });
    const events = [];
    for await (const event of createClient(WorkerService, transport).generate({})) events.push(event.event.case);
    expect(events).toEqual(["stop"]);
    // The client's session stays open (connect keeps it for the next call); close() must not wait on it.
    const closed = await Promise.race([
      server.close().then(() => "closed"),
      new Promise((resolve) => setTimeout(() => resolve("still open after 5 s"), 5000)),
    ]);
    expect(closed).toBe("closed");
  });
});
