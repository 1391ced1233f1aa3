/**
 * Connect clients for the GPU workers' gRPC-Web HTTP/1.1 listeners, for the unary RPCs (count_tokens,
 * health, drain, stats; Generate is read by grpc-web-stream.ts). workerd cannot speak HTTP/2, and it
 * rejects connect-web's `redirect: "error"` before sending, so these calls go through `workerFetch`,
 * which asks for `redirect: "manual"`. Both paths report network failures with the errors below:
 * `workerUnreachable` for a fetch that got no response (the worker is down; the request may go to
 * another worker), `connectionLost` (the `frontier-transport: lost` metadata) for a connection that
 * dropped after the worker answered (it died while running the request, which may have killed it:
 * never retried elsewhere).
 */
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { WorkerService } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

export type WorkerClient = Client<typeof WorkerService>;

/** Metadata on the ConnectError of a connection that dropped after the worker's response started. */
export const TRANSPORT_LOST = { header: "frontier-transport", value: "lost" } as const;

const clients = new Map<string, WorkerClient>();

/** A client for one worker; every call carries the shared worker token. */
export function workerClient(baseUrl: string, token: string): WorkerClient {
  const key = `${baseUrl}\u0000${token}`;
  let client = clients.get(key);
  if (!client) {
    const authorize: Interceptor = (next) => (request) => {
      request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    };
    client = createClient(
      WorkerService,
      createGrpcWebTransport({ baseUrl, fetch: workerFetch, interceptors: [authorize] }),
    );
    clients.set(key, client);
  }
  return client;
}

export const workerFetch: typeof fetch = async (input, init) => {
  const signal = init?.signal ?? undefined;
  let response: Response;
  try {
    response = await globalThis.fetch(input, { ...init, redirect: "manual" });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw workerUnreachable(error);
  }
  if (!response.body) return response;
  return new Response(guardBody(response.body, signal), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};

/** The error of a call whose fetch got no response: the worker may be down (failover may move it). */
export function workerUnreachable(cause: unknown): ConnectError {
  return new ConnectError("GPU worker unreachable", Code.Unavailable, undefined, undefined, cause);
}

/** The error of a worker connection that dropped after the worker answered (TRANSPORT_LOST). */
export function connectionLost(cause: unknown): ConnectError {
  return new ConnectError(
    "GPU worker connection lost",
    Code.Unavailable,
    { [TRANSPORT_LOST.header]: TRANSPORT_LOST.value },
    undefined,
    cause,
  );
}

function guardBody(body: ReadableStream<Uint8Array>, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(signal?.aborted ? error : connectionLost(error));
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
