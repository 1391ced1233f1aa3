/**
 * The worker's first look at every request, on both listeners: the worker token and the call's
 * capability (shared/capability.ts: signed by the edge with this worker's own key, naming this
 * worker, not expired), from the headers alone. connect's handler reads, decompresses and parses a
 * whole request message before any interceptor runs, so a check there comes after the work an
 * unauthenticated caller should never get (DESIGN.md, Trust boundaries: authenticate from headers,
 * before reading or decompressing a body). Whether the capability names the tenant and session the
 * body asks for is checked once the body is parsed (service.ts, capability-check.ts). A request
 * without the token gets the unauthenticated error of the protocol it speaks, one without a valid
 * capability the permission-denied error, and its body is never read:
 * - gRPC: a trailers-only response (HEADERS with `grpc-status: 16` or `7`, END_STREAM), then the
 *   stream is reset with NO_ERROR, which tells the client to stop sending (RFC 9113 §8.1);
 * - gRPC-Web: 200 with one trailer frame, as connect's own handler writes it;
 * - Connect (and anything else): 401 or 403 with Connect's JSON error.
 * On HTTP/1.1 the answer carries `Connection: close` and the socket is destroyed once it is written,
 * so the bytes still on the wire are dropped, not drained.
 */
import { timingSafeEqual } from "node:crypto";
import type * as http from "node:http";
import * as http2 from "node:http2";
import { CAPABILITY_HEADER } from "../shared/capability.ts";
import { type CapabilityVerifier, refusalMessage, verifiedCapability } from "./capability-check.ts";

type Request = http.IncomingMessage | http2.Http2ServerRequest;
type Response = http.ServerResponse | http2.Http2ServerResponse;
export type RequestHandler = (req: Request, res: Response) => void;

interface Refusal {
  /** gRPC status code: 16 UNAUTHENTICATED, 7 PERMISSION_DENIED. */
  grpcStatus: "16" | "7";
  httpStatus: 401 | 403;
  code: "unauthenticated" | "permission_denied";
  message: string;
}

const NO_TOKEN: Refusal = {
  grpcStatus: "16",
  httpStatus: 401,
  code: "unauthenticated",
  message: "missing or wrong worker token",
};

/**
 * Wraps `handler`: it sees only requests with `authorization: Bearer <token>` (compared in constant
 * time) and a capability that `capabilities` verifies for this worker.
 */
export function authenticateFirst(
  token: string,
  capabilities: CapabilityVerifier,
  handler: RequestHandler,
): RequestHandler {
  const expected = Buffer.from(`Bearer ${token}`);
  return (req, res) => {
    const given = Buffer.from(headerValue(req.headers.authorization));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      refuse(req, res, NO_TOKEN);
      return;
    }
    const capability = verifiedCapability(capabilities, headerValue(req.headers[CAPABILITY_HEADER]));
    if (typeof capability === "string") {
      const message = refusalMessage(capability);
      refuse(req, res, { grpcStatus: "7", httpStatus: 403, code: "permission_denied", message });
      return;
    }
    if (!(req instanceof http2.Http2ServerRequest)) closeIfAnsweredUnread(req, res as http.ServerResponse);
    handler(req, res);
  };
}

/**
 * HTTP/1.1: when connect answers before it has read the whole body (a message past the read limit:
 * RESOURCE_EXHAUSTED), the rest of that body is still on the connection, which then can't carry
 * another request: a client that reused it waited for its keep-alive timeout (60 s). The answer
 * says `Connection: close` and the socket is dropped once it is written.
 */
function closeIfAnsweredUnread(req: http.IncomingMessage, res: http.ServerResponse): void {
  // Node detaches the socket from the request once the response is done: keep it from here.
  const socket = req.socket;
  const writeHead = res.writeHead;
  res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
    if (!req.complete) this.shouldKeepAlive = false;
    return writeHead.apply(this, args);
  } as typeof writeHead;
  res.once("finish", () => {
    if (!req.complete) socket.destroy();
  });
}

function headerValue(value: string | string[] | undefined): string {
  return typeof value === "string" ? value : "";
}

function refuse(req: Request, res: Response, refusal: Refusal): void {
  const contentType = headerValue(req.headers["content-type"]).toLowerCase();
  if (req instanceof http2.Http2ServerRequest) {
    refuseStream(req.stream, contentType, refusal);
    return;
  }
  const answer = answerFor(contentType, refusal);
  const h1 = res as http.ServerResponse;
  h1.writeHead(answer.status, { ...answer.headers, "content-length": answer.body.length, connection: "close" });
  h1.end(answer.body);
  // Node would drain the unread body before closing; destroying the socket drops it instead.
  h1.once("finish", () => req.socket.destroy());
}

function refuseStream(stream: http2.ServerHttp2Stream, contentType: string, refusal: Refusal): void {
  if (stream.destroyed || stream.headersSent) return;
  const answer = answerFor(contentType, refusal);
  const endStream = answer.body.length === 0;
  stream.respond({ ":status": answer.status, ...answer.headers }, { endStream });
  if (!endStream) stream.end(answer.body);
  // Our side is complete: reset the client's half so it stops sending (never read).
  stream.close(http2.constants.NGHTTP2_NO_ERROR);
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function answerFor(contentType: string, refusal: Refusal): Answer {
  const message = encodeURIComponent(refusal.message);
  if (contentType.startsWith("application/grpc-web")) {
    const trailer = Buffer.from(`grpc-status: ${refusal.grpcStatus}\r\ngrpc-message: ${message}\r\n`);
    const frame = Buffer.alloc(5 + trailer.length);
    frame[0] = 0x80;
    frame.writeUInt32BE(trailer.length, 1);
    trailer.copy(frame, 5);
    const type = contentType.includes("json") ? "application/grpc-web+json" : "application/grpc-web+proto";
    return { status: 200, headers: { "content-type": type }, body: frame };
  }
  if (contentType.startsWith("application/grpc")) {
    const type = contentType.includes("json") ? "application/grpc+json" : "application/grpc+proto";
    return {
      status: 200,
      headers: { "content-type": type, "grpc-status": refusal.grpcStatus, "grpc-message": message },
      body: Buffer.alloc(0),
    };
  }
  return {
    status: refusal.httpStatus,
    headers: { "content-type": "application/json" },
    body: Buffer.from(JSON.stringify({ code: refusal.code, message: refusal.message })),
  };
}
