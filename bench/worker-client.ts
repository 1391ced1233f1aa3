/**
 * Straight to a worker, around the edge: a Connect client carrying the shared worker token (the dev
 * default unless set), the Generate request the benchmarks send, and a timed call.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { DEV_WORKER_TOKEN } from "../gpu-worker/config.ts";
import {
  type GenerateRequest,
  GenerateRequestSchema,
  type MessageSchema,
  type SamplingParamsSchema,
  WorkerService,
} from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import { newSessionId } from "../shared/ids.ts";

const workerAuth: Interceptor = (next) => (request) => {
  request.header.set("authorization", `Bearer ${process.env.FRONTIER_WORKER_TOKEN || DEV_WORKER_TOKEN}`);
  return next(request);
};

export type BenchWorkerClient = ReturnType<typeof benchWorkerClient>;

/** h2c gRPC (the worker's `grpcUrl`), or gRPC-Web over HTTP/1.1 (its `httpUrl`: what workerd speaks). */
export function benchWorkerClient(url: string, protocol: "grpc" | "grpc-web" = "grpc") {
  const transport =
    protocol === "grpc"
      ? createGrpcTransport({ baseUrl: url, interceptors: [workerAuth] })
      : createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1", interceptors: [workerAuth] });
  return createClient(WorkerService, transport);
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
