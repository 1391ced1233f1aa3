/**
 * Straight to a worker, around the edge: a Connect client carrying the shared worker token (the dev
 * default unless set) and what the edge adds to each call (a capability signed with the worker's
 * development key for the call's tenant and session, the session's ID key, the tenant's data key),
 * the Generate request the benchmarks send, and a timed call.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type CallOptions, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { tenantDataKey } from "../../edge/core/tenant-data-key.ts";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import {
  type GenerateEvent,
  type GenerateRequest,
  GenerateRequestSchema,
  type MessageSchema,
  type SamplingParamsSchema,
  WorkerService,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CAPABILITY_HEADER, type CapabilityOp, NO_SCOPE, signCapability, workerKey } from "../../shared/capability.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { newSessionId, sessionIdKey } from "../../shared/ids.ts";

/** The ops each worker method needs in its capability. */
const OP_OF: Record<string, CapabilityOp> = {
  Generate: "generate",
  CountTokens: "count_tokens",
  ReleaseSession: "release_session",
  Health: "health",
  Stats: "stats",
  Drain: "drain",
};

/** What the edge adds to a call, for a worker started with the development secrets as `workerId`. */
function workerAuth(workerId: string): Interceptor {
  return (next) => async (request) => {
    request.header.set("authorization", `Bearer ${process.env.FRONTIER_WORKER_TOKEN || DEV_WORKER_TOKEN}`);
    if (request.header.has(CAPABILITY_HEADER)) return next(request);
    // Unary calls name their tenant in the message; Generate (a stream) signs its own (below).
    const message = (request.stream ? {} : request.message) as { tenantId?: string; sessionId?: string };
    const op = OP_OF[request.method.name] ?? "health";
    request.header.set(CAPABILITY_HEADER, await capability(workerId, op, message.tenantId, message.sessionId));
    return next(request);
  };
}

async function capability(workerId: string, op: CapabilityOp, tenant?: string, session?: string): Promise<string> {
  const key = await workerKey(DEV_ID_SECRET, workerId);
  const expires = Math.floor(Date.now() / 1000) + 600;
  const scope = { tenant: tenant || NO_SCOPE, session: session || NO_SCOPE };
  return signCapability(key, { worker: workerId, ...scope, ops: [op], expires });
}

export type BenchWorkerClient = ReturnType<typeof benchWorkerClient>;

/** h2c gRPC (the worker's `grpcUrl`), or gRPC-Web over HTTP/1.1 (its `httpUrl`: what workerd speaks). */
export function benchWorkerClient(url: string, protocol: "grpc" | "grpc-web" = "grpc", workerId = "worker-1") {
  const interceptors = [workerAuth(workerId)];
  const transport =
    protocol === "grpc"
      ? createGrpcTransport({ baseUrl: url, interceptors })
      : createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1", interceptors });
  const client = createClient(WorkerService, transport);
  /** Generate as the edge sends it: the session's ID key and the tenant's data key in, a capability for them. */
  async function* generate(request: GenerateRequest, options: CallOptions = {}): AsyncGenerator<GenerateEvent> {
    if (request.sessionIdKey.length === 0) {
      request.sessionIdKey = await sessionIdKey(DEV_ID_SECRET, request.tenantId, request.sessionId);
      request.tenantDataKey = await tenantDataKey(DEV_ID_SECRET, request.tenantId);
    }
    const headers = new Headers(options.headers);
    headers.set(CAPABILITY_HEADER, await capability(workerId, "generate", request.tenantId, request.sessionId));
    yield* client.generate(request, { ...options, headers });
  }
  return { ...client, generate };
}

/** A text content list, as a Message's `content`. */
export function textContent(text: string) {
  return [{ block: { case: "text" as const, value: { text } } }];
}

/** The benchmarks' Generate request: tenant `local`, Messages ID kinds, a fresh session unless named. */
export function benchGenerateRequest(input: {
  messages: MessageInitShape<typeof MessageSchema>[];
  sampling: MessageInitShape<typeof SamplingParamsSchema>;
  sessionId?: string;
}): GenerateRequest {
  return create(GenerateRequestSchema, {
    requestId: "bench",
    tenantId: "local",
    sessionId: input.sessionId ?? newSessionId(),
    idKinds: { message: "msg", toolCall: "toolu" },
    conversation: { messages: input.messages },
    sampling: input.sampling,
  });
}

/** Wall time of one Generate call, read to its end. */
export async function timeGenerate(client: BenchWorkerClient, request: GenerateRequest): Promise<number> {
  const started = performance.now();
  for await (const _ of client.generate(request)) {
    // drain
  }
  return performance.now() - started;
}
