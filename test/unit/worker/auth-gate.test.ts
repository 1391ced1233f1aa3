/**
 * The worker checks its token and the call's capability from the headers, before reading or
 * decompressing a body: an unauthenticated request is answered while its body is still on the wire,
 * and the server reads no more than the first socket reads (measured at the server's socket);
 * authenticated requests keep working, an oversize message is RESOURCE_EXHAUSTED and a compressed
 * one is refused; the token without a capability signed with this worker's key is PERMISSION_DENIED.
 */
import { once } from "node:events";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  type Interceptor,
  type ServiceImpl,
  type Transport,
} from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateFirst } from "../../../gpu-worker/auth-gate.ts";
import { loadConfig } from "../../../gpu-worker/config.ts";
import { type RunningServer, startServer } from "../../../gpu-worker/server.ts";
import { CountTokensRequestSchema, WorkerService } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CAPABILITY_HEADER, type CapabilityOp, NO_SCOPE, signCapability } from "../../../shared/capability.ts";
import { LIMITS } from "../../../shared/limits.ts";

const TOKEN = "test-worker-token-0123456789";
const MiB = 1024 * 1024;
const BODY_BYTES = 64 * MiB;
const COUNT_TOKENS = "/frontier.worker.v1.WorkerService/CountTokens";
const WORKER_ID = "worker-under-test";
const KEY = new Uint8Array(32).fill(7);
const CAPABILITIES = { key: KEY, workerId: WORKER_ID };
const ALL_OPS: CapabilityOp[] = ["generate", "count_tokens", "release_session", "health", "stats", "drain"];
/** A capability for every operation on this worker, signed with `key` (the worker's own by default). */
function capability(key = KEY, worker = WORKER_ID): Promise<string> {
  const expires = Math.floor(Date.now() / 1000) + 600;
  return signCapability(key, { worker, tenant: NO_SCOPE, session: NO_SCOPE, ops: ALL_OPS, expires });
}
let VALID = "";
beforeAll(async () => {
  VALID = await capability();
});

/** The implementation counts the characters of the system prompt; `calls` says it ran. */
let calls = 0;
const impl: Partial<ServiceImpl<typeof WorkerService>> = {
  async countTokens(request) {
    calls++;
    return { inputTokens: request.conversation?.system.join("").length ?? 0 };
  },
  async health() {
    calls++;
    return { ready: true };
  },
};

const bearer =
  (token: string, withCapability: () => string = () => VALID): Interceptor =>
  (next) =>
  (request) => {
    request.header.set("authorization", `Bearer ${token}`);
    const value = withCapability();
    if (value) request.header.set(CAPABILITY_HEADER, value);
    return next(request);
  };

/** One gRPC-Web frame of a CountTokens request whose system prompt is `chars` long. */
function countTokensFrame(chars: number, gzip = false): Buffer {
  const message = Buffer.from(
    toBinary(
      CountTokensRequestSchema,
      create(CountTokensRequestSchema, { conversation: { system: ["a".repeat(chars)] } }),
    ),
  );
  const payload = gzip ? gzipSync(message) : message;
  const frame = Buffer.alloc(5 + payload.length);
  frame[0] = gzip ? 1 : 0;
  frame.writeUInt32BE(payload.length, 1);
  payload.copy(frame, 5);
  return frame;
}

interface RawAnswer {
  head: string;
  body: string;
  /** Body bytes the client had handed to its socket when the answer's first bytes arrived. */
  writtenAtAnswer: number;
}

/**
 * POST over a raw HTTP/1.1 socket: headers announcing `bodyBytes`, then the body written as fast as
 * the socket takes it, until the server answers or closes. Resolves with what came back.
 */
function rawPost(port: number, headers: Record<string, string>, bodyBytes: number): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    let writtenAtAnswer = -1;
    let written = 0;
    let answered = false;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    socket.on("data", (data) => {
      if (!answered) writtenAtAnswer = written;
      answered = true;
      received.push(data);
    });
    socket.on("error", () => undefined); // EPIPE / ECONNRESET once the server drops the rest
    socket.on("close", () => {
      const text = Buffer.concat(received).toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error(`no answer (${text.length} bytes)`));
      resolve({ head: text.slice(0, split), body: text.slice(split + 4), writtenAtAnswer });
    });
    socket.once("connect", () => {
      const lines = Object.entries({ ...headers, host: "127.0.0.1", "content-length": String(bodyBytes) });
      socket.write(`POST ${COUNT_TOKENS} HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}`).join("\r\n")}\r\n\r\n`);
      const pump = () => {
        while (!answered && !socket.destroyed && written < bodyBytes) {
          const part = chunk.subarray(0, Math.min(chunk.length, bodyBytes - written));
          written += part.length;
          if (!socket.write(part)) return void socket.once("drain", pump);
        }
        if (written >= bodyBytes || answered) socket.end();
      };
      pump();
    });
  });
}

describe("the worker's token gate, at the socket", () => {
  /** A server of only the gate in front of a handler that must never run; the server side's bytes read. */
  async function gateServer(kind: "h1" | "h2") {
    let handled = 0;
    const sockets: net.Socket[] = [];
    const gate = authenticateFirst(TOKEN, CAPABILITIES, () => {
      handled++;
    });
    const server = kind === "h1" ? http.createServer(gate) : http2.createServer(gate);
    server.on("connection", (socket: net.Socket) => sockets.push(socket));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as net.AddressInfo).port;
    return {
      port,
      handled: () => handled,
      bytesRead: () => sockets.reduce((sum, s) => sum + s.bytesRead, 0),
      close: () => {
        for (const s of sockets) s.destroy();
        return new Promise<void>((done) => server.close(() => done()));
      },
    };
  }

  it("HTTP/1.1: answers a 64 MiB body without the token from its headers and drops the body unread", async () => {
    const gate = await gateServer("h1");
    const answer = await rawPost(gate.port, { "content-type": "application/grpc-web+proto" }, BODY_BYTES);
    expect(answer.head).toMatch(/^HTTP\/1\.1 200/);
    expect(answer.head.toLowerCase()).toContain("connection: close");
    expect(answer.body).toContain("grpc-status: 16");
    expect(answer.writtenAtAnswer).toBeLessThan(BODY_BYTES);
    expect(gate.handled()).toBe(0);
    // The server read the headers and at most its first few socket reads, not the body.
    expect(gate.bytesRead()).toBeLessThan(1 * MiB);
    await gate.close();
  });

  it("HTTP/2: a trailers-only UNAUTHENTICATED, the stream reset, the body never read", async () => {
    const gate = await gateServer("h2");
    const session = http2.connect(`http://127.0.0.1:${gate.port}`);
    const stream = session.request({
      ":method": "POST",
      ":path": COUNT_TOKENS,
      "content-type": "application/grpc+proto",
      authorization: "Bearer not-the-token-at-all-0000",
    });
    stream.on("error", () => undefined);
    stream.resume();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    let headers: http2.IncomingHttpHeaders | undefined;
    stream.on("response", (h) => {
      headers = h;
    });
    const pump = () => {
      while (headers === undefined && !stream.destroyed && written < BODY_BYTES) {
        written += chunk.length;
        if (!stream.write(chunk)) return void stream.once("drain", pump);
      }
    };
    pump();
    await once(stream, "close");
    expect(headers?.[":status"]).toBe(200);
    expect(headers?.["grpc-status"]).toBe("16");
    expect(written).toBeLessThan(BODY_BYTES);
    expect(gate.handled()).toBe(0);
    expect(gate.bytesRead()).toBeLessThan(1 * MiB);
    session.destroy();
    await gate.close();
  });
});

describe("the worker's server", () => {
  let server: RunningServer;
  const transports: Record<string, (token: string, capability?: () => string) => Transport> = {};
  beforeAll(async () => {
    server = await startServer(impl as ServiceImpl<typeof WorkerService>, {
      host: "127.0.0.1",
      grpcPort: 0,
      httpPort: 0,
      workerToken: TOKEN,
      ...{ capabilityKey: KEY, workerId: WORKER_ID },
      maxMessageBytes: 1 * MiB,
    });
    transports["gRPC-Web over HTTP/1.1"] = (token, cap) =>
      createGrpcWebTransport({
        baseUrl: `http://127.0.0.1:${server.httpPort}`,
        httpVersion: "1.1",
        interceptors: [bearer(token, cap)],
      });
    transports["gRPC over h2c"] = (token, cap) =>
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.grpcPort}`, interceptors: [bearer(token, cap)] });
  });
  afterAll(() => server.close());

  const code = async (call: Promise<unknown>) => {
    try {
      await call;
      return "ok";
    } catch (error) {
      return Code[ConnectError.from(error).code];
    }
  };

  it.each(["gRPC-Web over HTTP/1.1", "gRPC over h2c"])(
    "%s: authenticated calls work, a wrong token is UNAUTHENTICATED, an oversize message RESOURCE_EXHAUSTED",
    async (name) => {
      const transport = transports[name];
      if (!transport) throw new Error(name);
      const client = createClient(WorkerService, transport(TOKEN));
      expect((await client.health({})).ready).toBe(true);
      const fits = await client.countTokens({ conversation: { system: ["a".repeat(MiB - 1000)] } });
      expect(fits.inputTokens).toBe(MiB - 1000);
      const before = calls;
      const stranger = createClient(WorkerService, transport("not-the-worker-token-000"));
      expect(await code(stranger.health({}))).toBe("Unauthenticated");
      expect(await code(stranger.countTokens({ conversation: { system: ["a".repeat(4 * MiB)] } }))).toBe(
        "Unauthenticated",
      );
      expect(calls).toBe(before);
      const oversize = client.countTokens({ conversation: { system: ["a".repeat(MiB + 1)] } });
      expect(await code(oversize)).toBe("ResourceExhausted");
      expect(calls).toBe(before);
      // The refused body's rest never blocks the next call (HTTP/1.1 reused the connection and hung 60 s).
      expect((await client.health({})).ready).toBe(true);
    },
  );

  it.each(["gRPC-Web over HTTP/1.1", "gRPC over h2c"])(
    "%s: the worker token without a valid capability is PERMISSION_DENIED, and the handler never runs",
    async (name) => {
      const transport = transports[name];
      if (!transport) throw new Error(name);
      const otherWorkersKey = new Uint8Array(32).fill(9);
      const [foreign, forOther, expired] = await Promise.all([
        capability(otherWorkersKey),
        capability(KEY, "worker-2"),
        signCapability(KEY, { worker: WORKER_ID, tenant: NO_SCOPE, session: NO_SCOPE, ops: ALL_OPS, expires: 1 }),
      ]);
      const [head = "", , mac = ""] = VALID.split(".");
      const tampered = `${head}.${Buffer.from('{"w":"worker-under-test","t":"b","s":"none","o":["drain"],"e":9999999999}').toString("base64url")}.${mac}`;
      const before = calls;
      for (const value of ["", "v1.garbage", foreign, forOther, expired, tampered]) {
        const client = createClient(
          WorkerService,
          transport(TOKEN, () => value),
        );
        expect(await code(client.health({}))).toBe("PermissionDenied");
        expect(await code(client.countTokens({ conversation: { system: ["a".repeat(1000)] } }))).toBe(
          "PermissionDenied",
        );
      }
      expect(calls).toBe(before);
    },
  );

  it("answers an unauthenticated 64 MiB body while it is still being sent", async () => {
    const answer = await rawPost(server.httpPort, { "content-type": "application/grpc-web+proto" }, BODY_BYTES);
    expect(answer.body).toContain("grpc-status: 16");
    expect(answer.writtenAtAnswer).toBeLessThan(BODY_BYTES);
  });

  it("never inflates a gzip body: unauthenticated it is refused unread, authenticated compression is refused", async () => {
    const bomb = countTokensFrame(64 * MiB, true);
    expect(bomb.length).toBeLessThan(128 * 1024);
    const post = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${server.httpPort}${COUNT_TOKENS}`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web+proto", "grpc-encoding": "gzip", ...headers },
        body: new Uint8Array(bomb),
      }).then(async (r) => ({ status: r.status, body: Buffer.from(await r.arrayBuffer()).toString("latin1") }));
    const before = calls;
    expect((await post({})).body).toContain("grpc-status: 16");
    expect((await post({ authorization: `Bearer ${TOKEN}` })).body).toContain("grpc-status: 7");
    const authenticated = await post({ authorization: `Bearer ${TOKEN}`, [CAPABILITY_HEADER]: VALID });
    // Compression is off: UNIMPLEMENTED (12) names the encoding, nothing was inflated or parsed.
    expect(authenticated.body).toMatch(/grpc-status: 12/);
    expect(calls).toBe(before);
  });
});

describe("FRONTIER_MAX_MESSAGE_MB", () => {
  const dev = { FRONTIER_DEV: "1" };
  it("defaults to twice the edge's largest body, is configurable, and is at least 1 MB", () => {
    expect(loadConfig(dev).maxMessageBytes).toBe(2 * LIMITS.maxBodyBytes);
    expect(loadConfig({ ...dev, FRONTIER_MAX_MESSAGE_MB: "8" }).maxMessageBytes).toBe(8 * MiB);
    expect(() => loadConfig({ ...dev, FRONTIER_MAX_MESSAGE_MB: "0" })).toThrow(/at least 1/);
  });
});
