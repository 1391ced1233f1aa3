/**
 * A native gRPC client (@grpc/grpc-js, built from the same .proto with @grpc/proto-loader) talks to
 * the worker's h2c listener: proof that the contract is plain gRPC, not only gRPC-Web.
 */
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, describe, expect, inject, it } from "vitest";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import { REPO_ROOT } from "../../scripts/stack.ts";

type Callback = (error: grpc.ServiceError | null, response: Record<string, unknown>) => void;

interface WorkerClient extends grpc.Client {
  Health(request: object, metadata: grpc.Metadata, callback: Callback): void;
  Stats(request: object, metadata: grpc.Metadata, callback: Callback): void;
  CountTokens(request: object, metadata: grpc.Metadata, callback: Callback): void;
  Generate(request: object, metadata: grpc.Metadata): grpc.ClientReadableStream<Record<string, unknown>>;
}

/** Every worker RPC carries the shared worker token (the dev default here). */
function auth(token = DEV_WORKER_TOKEN): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

const definition = protoLoader.loadSync(join(REPO_ROOT, "proto/frontier/worker/v1/worker.proto"), {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});
const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  frontier: {
    worker: { v1: { WorkerService: new (address: string, credentials: grpc.ChannelCredentials) => WorkerClient } };
  };
};
const address = inject("workerGrpcUrl").replace("http://", "");
const client = new loaded.frontier.worker.v1.WorkerService(address, grpc.credentials.createInsecure());
afterAll(() => client.close());

function unary(
  method: "Health" | "Stats" | "CountTokens",
  request: object,
  metadata = auth(),
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, (error, response) => (error ? reject(error) : resolve(response)));
  });
}

const conversation = {
  system: ["You are terse."],
  messages: [{ role: "ROLE_USER", content: [{ text: { text: "Hello there" } }] }],
};

describe("native gRPC (h2c) against the worker", () => {
  it("refuses calls without the worker token", async () => {
    await expect(unary("Health", {}, new grpc.Metadata())).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    await expect(unary("Health", {}, auth("not-the-worker-token-at-all"))).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
  });

  it("answers Health with the model identity", async () => {
    const health = await unary("Health", {});
    expect(health.ready).toBe(true);
    expect(String(health.modelIdentity)).toMatch(/^[0-9a-f]{16,}$/);
  });

  it("reports Stats: sequences, sessions and checkpoints", async () => {
    const stats = await unary("Stats", {});
    expect(Number(stats.sequencesTotal)).toBe(4);
    expect(Number(stats.sequencesFree)).toBeLessThanOrEqual(4);
    for (const field of ["liveSessions", "parkedSessions", "queuedRequests", "checkpoints", "checkpointBytes"]) {
      expect(stats[field], field).toBeDefined();
    }
  });

  it("counts tokens of a rendered conversation", async () => {
    const counted = await unary("CountTokens", { requestId: "t1", tenantId: "local", conversation });
    expect(Number(counted.inputTokens)).toBeGreaterThan(5);
  });

  it("streams a Generate turn: prompt first, text, then stop with usage", async () => {
    const call = client.Generate(
      {
        requestId: "t2",
        tenantId: "local",
        sessionId: "0123456789abcdef0123456789abcdef",
        idKinds: { message: "msg", toolCall: "toolu" },
        conversation,
        sampling: { maxTokens: 8, temperature: 0 },
      },
      auth(),
    );
    const kinds: string[] = [];
    let stop: Record<string, unknown> | undefined;
    for await (const event of call as AsyncIterable<Record<string, unknown>>) {
      kinds.push(String(event.event));
      if (event.event === "stop") stop = event.stop as Record<string, unknown>;
    }
    // The worker acknowledges a Generate at once with a keep-alive (the edge tells a worker that died
    // while running the request from one it never reached); the cache decision comes next.
    expect(kinds[0]).toBe("keepAlive");
    expect(kinds.filter((k) => k !== "keepAlive")[0]).toBe("prompt");
    expect(kinds.at(-1)).toBe("stop");
    expect(stop?.reason).toMatch(/STOP_REASON_(MAX_TOKENS|END_TURN)/);
    const usage = stop?.usage as Record<string, number>;
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeLessThanOrEqual(8);
  });
});
