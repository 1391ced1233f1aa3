/**
 * The required-work shape: what a multi-tenant streamed turn cannot skip on this runtime, with none
 * of Frontier's code. A minimal Worker in workerd (bench/edge/turn-shape.ts's startShapeWorker) that
 * asks the tenant's admission object while it reads and JSON-parses the POSTed body (one Durable
 * Object round trip, decided in the object's memory as the edge's limiter decides), HMAC-signs a
 * capability for the worker (the wire form of shared/capability.ts, its key imported once), makes
 * the same gRPC-Web Generate call, waits for its first message before the headers, splits the
 * gRPC-Web frames and writes one SSE event per message through a TransformStream, and after the
 * stream's end makes the edge's four after-response Durable Object calls in waitUntil: the
 * admission's release and a metrics add (in memory, as the edge's write-behind objects take them),
 * the session's record and the tenant's usage (each a SQLite row, durable at once, as the edge's
 * SessionDO and UsageDO write them). What the Frontier edge costs over this is its own code.
 * bench/edge/edge-ab.ts runs it with the edge's compatibility date and flags (no difference to its CPU:
 * 3.26 ± 0.03 against 3.22 ± 0.04 ms per turn as a plain Worker, 2026-12-06).
 */

import { createMethodUrl } from "@connectrpc/connect/protocol";
import type { GenerateRequest } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { WorkerService } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { generateBody, startShapeWorker, type TurnShape } from "./turn-shape.ts";

const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
export class Admission extends DurableObject {
  leases = new Map();
  async acquire(id) {
    if (this.leases.size >= 64) return false;
    this.leases.set(id, Date.now());
    return true;
  }
  async release(id) { this.leases.delete(id); }
}
export class Ledger extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS turns (id TEXT PRIMARY KEY, value TEXT NOT NULL)");
  }
  async record(id, value) { this.ctx.storage.sql.exec("INSERT OR REPLACE INTO turns VALUES (?, ?)", id, value); }
}
export class Counters extends DurableObject {
  sums = new Map();
  async add(name, value) { this.sums.set(name, (this.sums.get(name) ?? 0) + value); }
}
const encoder = new TextEncoder();
const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
let generateBody; // the fixed request, decoded once
let signingKey; // the worker's key, imported once
async function capability(env, tenant, session) {
  signingKey ??= crypto.subtle.importKey("raw", Uint8Array.from(atob(env.WORKER_KEY), (c) => c.charCodeAt(0)),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const payload = { w: env.WORKER_ID, t: tenant, s: session, o: ["generate"], e: Math.floor(Date.now() / 1000) + 120 };
  const signed = "v1." + b64url(encoder.encode(JSON.stringify(payload)));
  return signed + "." + b64url(new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey, encoder.encode(signed))));
}
/** The gRPC-Web frames in buffer (flag, length, message); what is left of an incomplete one. */
function frames(buffer) {
  const out = [];
  let at = 0;
  while (buffer.byteLength - at >= 5) {
    const length = new DataView(buffer.buffer, buffer.byteOffset + at + 1, 4).getUint32(0);
    if (buffer.byteLength - at - 5 < length) break;
    out.push({ trailer: (buffer[at] & 0x80) !== 0, bytes: length });
    at += 5 + length;
  }
  return { out, rest: buffer.subarray(at) };
}
export default {
  async fetch(request, env, ctx) {
    const tenant = "local";
    const requestId = crypto.randomUUID();
    const admission = env.ADMISSION.getByName(tenant);
    const admitted = admission.acquire(requestId);
    const body = await request.json();
    if (!(await admitted)) return new Response("over the limit", { status: 429 });
    const upstream = await fetch(env.GENERATE_URL, {
      method: "POST",
      headers: {
        "content-type": "application/grpc-web+proto",
        "x-grpc-web": "1",
        authorization: "Bearer " + env.WORKER_TOKEN,
        "x-frontier-capability": await capability(env, tenant, env.SESSION_ID),
      },
      body: (generateBody ??= Uint8Array.from(atob(env.GENERATE_BODY), (c) => c.charCodeAt(0))),
    });
    const reader = upstream.body.getReader();
    const first = await reader.read();
    if (upstream.status !== 200 || upstream.headers.has("grpc-status") || first.done || first.value[0] & 0x80) {
      const trailer = first.done ? "" : new TextDecoder().decode(first.value.subarray(5));
      ctx.waitUntil(admission.release(requestId));
      return new Response("the worker refused the call: " + trailer, { status: 502 });
    }
    const { readable, writable } = new TransformStream(undefined, { highWaterMark: 32 });
    const writer = writable.getWriter();
    ctx.waitUntil((async () => {
      let rest = new Uint8Array(0);
      let events = 0;
      for (let chunk = first; !chunk.done; chunk = await reader.read()) {
        const joined = rest.byteLength === 0 ? chunk.value : new Uint8Array([...rest, ...chunk.value]);
        const split = frames(joined);
        rest = split.rest;
        const text = split.out
          .filter((frame) => !frame.trailer)
          .map((frame) => "event: message\\ndata: " + JSON.stringify({ index: events++, bytes: frame.bytes }) + "\\n\\n")
          .join("");
        if (text !== "") writer.write(encoder.encode(text));
      }
      await writer.close();
      const session = request.headers.get("x-claude-code-session-id") ?? "none";
      const turn = JSON.stringify({ requestId, messages: body.messages.length, events });
      await Promise.allSettled([
        admission.release(requestId),
        env.LEDGER.getByName("session:" + session).record(requestId, turn),
        env.LEDGER.getByName("usage:" + tenant).record(requestId, turn),
        env.COUNTERS.getByName("edge").add("turns", 1),
      ]);
    })());
    return new Response(readable, { headers: { "content-type": "text/event-stream; charset=utf-8" } });
  },
};`;

/** The required-work shape in front of the worker at `workerHttpUrl` (its gRPC-Web listener). */
export function startRequiredWorkShape(options: {
  workerHttpUrl: string;
  workerToken: string;
  /** The worker's id and capability key (what the edge derives from ID_SECRET), to sign each call. */
  workerId: string;
  workerKey: Uint8Array;
  /** The fixed Generate request (its tenant and session name the capability's). */
  request: GenerateRequest;
  /** The runtime's settings (default: a plain Worker's; bench/edge/edge-ab.ts passes the edge's). */
  compatibility?: { date: string; flags: string[] };
}): Promise<TurnShape> {
  return startShapeWorker(
    SCRIPT,
    { ADMISSION: "Admission", LEDGER: "Ledger", COUNTERS: "Counters" },
    {
      GENERATE_URL: createMethodUrl(options.workerHttpUrl, WorkerService.method.generate),
      GENERATE_BODY: generateBody(options.request),
      WORKER_TOKEN: options.workerToken,
      WORKER_ID: options.workerId,
      WORKER_KEY: Buffer.from(options.workerKey).toString("base64"),
      SESSION_ID: options.request.sessionId,
    },
    options.compatibility,
  );
}
