/**
 * The runtime's floor for the shape of an edge turn, with none of Frontier's code: a minimal Worker
 * in workerd (Miniflare on its own socket, as scripts/workerd-edge.ts runs the edge) that reads and
 * parses the POSTed JSON, makes one Durable Object RPC (the session's lookup), calls the worker's
 * Generate over gRPC-Web with a fixed request, waits for its first chunk (the edge waits for the
 * cache decision before its headers), and streams one SSE event per chunk it reads. What the edge
 * costs over this is Frontier's own work: auth, validation, the limiter, the SessionDO's lease, the
 * protocol's rendering, the turn's bookkeeping. bench/edge/edge-alone.ts runs it beside the edge.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toBinary } from "@bufbuild/protobuf";
import { createMethodUrl, encodeEnvelope } from "@connectrpc/connect/protocol";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import {
  type GenerateRequest,
  GenerateRequestSchema,
  WorkerService,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { freePort } from "../../scripts/stack.ts";

const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
export class Session extends DurableObject {
  async open(turn) { return { turn, worker: 0 }; }
}
const encoder = new TextEncoder();
let generateBody; // the fixed request, decoded once
const sse = (event, data) => encoder.encode("event: " + event + "\\ndata: " + JSON.stringify(data) + "\\n\\n");
export default {
  async fetch(request, env, ctx) {
    const body = await request.json();
    await env.SESSION.getByName("one").open(body.messages.length);
    const upstream = await fetch(env.GENERATE_URL, {
      method: "POST",
      headers: {
        "content-type": "application/grpc-web+proto",
        "x-grpc-web": "1",
        authorization: "Bearer " + env.WORKER_TOKEN,
        ...JSON.parse(env.EXTRA_HEADERS),
      },
      body: (generateBody ??= Uint8Array.from(atob(env.GENERATE_BODY), (c) => c.charCodeAt(0))),
    });
    const reader = upstream.body.getReader();
    const first = await reader.read();
    // A refused call (e.g. a bad token) has no message before its trailer (the 0x80 frame): fail
    // rather than time an error.
    if (upstream.status !== 200 || upstream.headers.has("grpc-status") || first.done || first.value[0] & 0x80) {
      const trailer = first.done ? "" : new TextDecoder().decode(first.value.subarray(5));
      return new Response("the worker refused the call: " + trailer, { status: 502 });
    }
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    ctx.waitUntil((async () => {
      for (let chunk = first; !chunk.done; chunk = await reader.read()) {
        writer.write(sse("chunk", { bytes: chunk.value.byteLength }));
      }
      await writer.close();
    })());
    return new Response(readable, { headers: { "content-type": "text/event-stream" } });
  },
};`;

export interface TurnShape {
  url: string;
  stop(): Promise<void>;
}

/** The shape's Worker in front of the worker at `workerHttpUrl` (its gRPC-Web listener). */
export function startTurnShape(options: {
  workerHttpUrl: string;
  workerToken: string;
  request: GenerateRequest;
  /** Fixed headers every call carries besides the token (a pre-signed capability). */
  headers?: Record<string, string>;
}): Promise<TurnShape> {
  return startShapeWorker(
    SCRIPT,
    { SESSION: "Session" },
    {
      GENERATE_URL: createMethodUrl(options.workerHttpUrl, WorkerService.method.generate),
      GENERATE_BODY: generateBody(options.request),
      WORKER_TOKEN: options.workerToken,
      EXTRA_HEADERS: JSON.stringify(options.headers ?? {}),
    },
  );
}

/** `request` as one gRPC-Web message frame, base64 (a shape's fixed Generate body). */
export function generateBody(request: GenerateRequest): string {
  return Buffer.from(encodeEnvelope(0, toBinary(GenerateRequestSchema, request))).toString("base64");
}

/**
 * A reference shape's `script` in workerd on its own socket, as scripts/workerd-edge.ts runs the
 * edge: its Durable Object classes (binding → class, SQLite-backed, in a state folder of its own)
 * and string bindings.
 */
export async function startShapeWorker(
  script: string,
  durableObjects: Record<string, string>,
  bindings: Record<string, string>,
  /** The runtime's settings (default: a plain Worker's, no flags). */
  compatibility: { date: string; flags: string[] } = { date: "2025-04-01", flags: [] },
): Promise<TurnShape> {
  const stateDir = mkdtempSync(join(tmpdir(), "frontier-turn-shape-"));
  const port = await freePort();
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script,
      compatibilityDate: compatibility.date,
      compatibilityFlags: compatibility.flags,
      durableObjects: Object.fromEntries(
        Object.entries(durableObjects).map(([binding, className]) => [binding, { className, useSQLite: true }]),
      ),
      resourcePersistencePath: stateDir,
      bindings,
      unsafeDirectSockets: [{ host: "127.0.0.1", port }],
      host: "127.0.0.1",
      port: 0,
    }),
  );
  await miniflare.ready;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await miniflare.dispose();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
