/**
 * A native gRPC client (@grpc/grpc-js, built from the same .proto with @grpc/proto-loader) talks to
 * the worker's h2c listener: proof that the contract is plain gRPC, not only gRPC-Web. Every call
 * carries the worker token and a capability signed for this worker (test/support/dev-capability.ts).
 */
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, describe, expect, inject, it } from "vitest";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import { REPO_ROOT } from "../../scripts/stack.ts";
import { CAPABILITY_HEADER } from "../../shared/capability.ts";
import { devCapability, devSessionIdKey } from "../support/dev-capability.ts";

type Callback = (error: grpc.ServiceError | null, response: Record<string, unknown>) => void;

interface WorkerClient extends grpc.Client {
  Health(request: object, metadata: grpc.Metadata, callback: Callback): void;
  Stats(request: object, metadata: grpc.Metadata, callback: Callback): void;
  CountTokens(request: object, metadata: grpc.Metadata, callback: Callback): void;
  Generate(request: object, metadata: grpc.Metadata): grpc.ClientReadableStream<Record<string, unknown>>;
}

/** Every worker RPC carries the shared worker token (the dev default here) and, given one, a capability. */
function auth(token = DEV_WORKER_TOKEN, capability = ""): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  if (capability) metadata.set(CAPABILITY_HEADER, capability);
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

  it("refuses the worker token without a capability, and a capability for another tenant", async () => {
    await expect(unary("Health", {})).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    const forOther = await devCapability(["count_tokens"], "other");
    await expect(
      unary("CountTokens", { requestId: "t0", tenantId: "local", conversation }, auth(DEV_WORKER_TOKEN, forOther)),
    ).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
  });

  it("answers Health with the model identity", async () => {
    const health = await unary("Health", {}, auth(DEV_WORKER_TOKEN, await devCapability(["health"])));
    expect(health.ready).toBe(true);
    expect(String(health.modelIdentity)).toMatch(/^[0-9a-f]{16,}$/);
  });

  it("reports Stats: sequences, sessions and checkpoints", async () => {
    const stats = await unary("Stats", {}, auth(DEV_WORKER_TOKEN, await devCapability(["stats"])));
    expect(Number(stats.sequencesTotal)).toBe(4);
    expect(Number(stats.sequencesFree)).toBeLessThanOrEqual(4);
    for (const field of ["liveSessions", "parkedSessions", "queuedRequests", "checkpoints", "checkpointBytes"]) {
      expect(stats[field], field).toBeDefined();
    }
  });

  it("counts tokens of a rendered conversation", async () => {
    const capability = await devCapability(["count_tokens"], "local");
    const counted = await unary(
      "CountTokens",
      { requestId: "t1", tenantId: "local", conversation },
      auth(DEV_WORKER_TOKEN, capability),
    );
    expect(Number(counted.inputTokens)).toBeGreaterThan(5);
  });

  it("streams a Generate turn: prompt first, text, then stop with usage", async () => {
    const sessionId = "0123456789abcdef0123456789abcdef";
    const call = client.Generate(
      {
        requestId: "t2",
        tenantId: "local",
        sessionId,
        idKinds: { message: "msg", toolCall: "toolu" },
        conversation,
        sampling: { maxTokens: 8, temperature: 0 },
        sessionIdKey: Buffer.from(await devSessionIdKey("local", sessionId)),
      },
      auth(DEV_WORKER_TOKEN, await devCapability(["generate"], "local", sessionId)),
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
