/**
 * TLS on the edge -> worker hop (issue 30 item 2): with FRONTIER_TLS_CERT_FILE / _KEY_FILE both
 * listeners serve TLS and offer h2 and http/1.1 by ALPN, so a gRPC client (h2) and a gRPC-Web client
 * (HTTP/1.1, as the edge in workerd speaks) each complete a real call against a certificate made
 * here with openssl; a plaintext client gets no answer from a TLS port. Outside local development a
 * plaintext listener on a non-loopback address stops the worker at start-up unless allowed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Interceptor, type ServiceImpl, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advertisedUrl, loadConfig } from "../../../gpu-worker/config.ts";
import { type RunningServer, startServer } from "../../../gpu-worker/server.ts";
import { WorkerService } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CAPABILITY_HEADER, NO_SCOPE, signCapability } from "../../../shared/capability.ts";

const TOKEN = "test-worker-token-tls-0123";
const KEY = new Uint8Array(32).fill(9);
const WORKER_ID = "worker-tls";
const dir = mkdtempSync(join(tmpdir(), "frontier-tls-"));
const certFile = join(dir, "cert.pem");
const keyFile = join(dir, "key.pem");

let server: RunningServer;
let ca: Buffer;
let healthCalls = 0;

beforeAll(async () => {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    { stdio: "ignore" },
  );
  ca = readFileSync(certFile);
  const impl: Partial<ServiceImpl<typeof WorkerService>> = {
    async health() {
      healthCalls++;
      return { ready: true };
    },
  };
  server = await startServer(impl as ServiceImpl<typeof WorkerService>, {
    host: "127.0.0.1",
    grpcPort: 0,
    httpPort: 0,
    workerToken: TOKEN,
    capabilityKey: KEY,
    workerId: WORKER_ID,
    tls: { certFile, keyFile },
  });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The worker token and a health capability signed with the worker's key. */
const authenticated: Interceptor = (next) => async (request) => {
  const expires = Math.floor(Date.now() / 1000) + 60;
  const capability = await signCapability(KEY, {
    worker: WORKER_ID,
    tenant: NO_SCOPE,
    session: NO_SCOPE,
    ops: ["health"],
    expires,
  });
  request.header.set("authorization", `Bearer ${TOKEN}`);
  request.header.set(CAPABILITY_HEADER, capability);
  return next(request);
};

async function health(transport: Transport): Promise<boolean> {
  return (await createClient(WorkerService, transport).health({}, { timeoutMs: 5000 })).ready;
}

describe("worker listeners over TLS", () => {
  it("answers a gRPC client over h2 + TLS, verified against the certificate", async () => {
    const before = healthCalls;
    const transport = createGrpcTransport({
      baseUrl: `https://localhost:${server.grpcPort}`,
      nodeOptions: { ca },
      interceptors: [authenticated],
    });
    expect(await health(transport)).toBe(true);
    expect(healthCalls).toBe(before + 1);
  });

  it("answers a gRPC-Web client over HTTP/1.1 + TLS (the edge's protocol) on the gRPC-Web port", async () => {
    const before = healthCalls;
    const transport = createGrpcWebTransport({
      baseUrl: `https://127.0.0.1:${server.httpPort}`,
      httpVersion: "1.1",
      nodeOptions: { ca },
      interceptors: [authenticated],
    });
    expect(await health(transport)).toBe(true);
    expect(healthCalls).toBe(before + 1);
  });

  it("refuses a client that does not trust the certificate, and plaintext gets no answer", async () => {
    const untrusting = createGrpcWebTransport({
      baseUrl: `https://127.0.0.1:${server.httpPort}`,
      httpVersion: "1.1",
      interceptors: [authenticated],
    });
    await expect(health(untrusting)).rejects.toThrow(/self-signed|certificate/i);
    const plaintext = createGrpcWebTransport({
      baseUrl: `http://127.0.0.1:${server.httpPort}`,
      httpVersion: "1.1",
      interceptors: [authenticated],
    });
    await expect(health(plaintext)).rejects.toThrow();
  });
});

describe("the worker's plaintext rule outside local development", () => {
  const deployed = {
    FRONTIER_CAPABILITY_KEY: "mRBB-vVfVPbsqsL45vOhAXeGALax3BCi8NDCYgvglWc",
    FRONTIER_WORKER_TOKEN: "Wt9dQ2xLr7Vb0ZpK4sHn6Ty1",
  };

  it.each(["0.0.0.0", "10.0.0.11", "gpu-1.internal"])("refuses plaintext on %s with a clear error", (host) => {
    expect(() => loadConfig({ ...deployed, FRONTIER_WORKER_HOST: host })).toThrow(
      /without TLS: set FRONTIER_TLS_CERT_FILE and FRONTIER_TLS_KEY_FILE.*FRONTIER_ALLOW_PLAINTEXT=1/,
    );
  });

  it("accepts TLS files, an explicit FRONTIER_ALLOW_PLAINTEXT=1, or a loopback bind", () => {
    const tls = { FRONTIER_TLS_CERT_FILE: certFile, FRONTIER_TLS_KEY_FILE: keyFile };
    expect(loadConfig({ ...deployed, ...tls, FRONTIER_WORKER_HOST: "10.0.0.11" }).tls).toEqual({ certFile, keyFile });
    const allowed = loadConfig({ ...deployed, FRONTIER_ALLOW_PLAINTEXT: "1", FRONTIER_WORKER_HOST: "10.0.0.11" });
    expect(allowed.tls).toBeUndefined();
    expect(loadConfig({ ...deployed, FRONTIER_WORKER_HOST: "127.0.0.1" }).host).toBe("127.0.0.1");
  });

  it("refuses a certificate without its key, and a FRONTIER_ALLOW_PLAINTEXT other than 1", () => {
    expect(() => loadConfig({ ...deployed, FRONTIER_TLS_CERT_FILE: certFile })).toThrow(/go together/);
    expect(() => loadConfig({ ...deployed, FRONTIER_ALLOW_PLAINTEXT: "yes" })).toThrow(
      /FRONTIER_ALLOW_PLAINTEXT must be "1"/,
    );
  });
});

describe("the URL a worker advertises to the pool", () => {
  it("is https:// when its listeners serve TLS, http:// otherwise, and FRONTIER_ADVERTISE_URL when set", () => {
    const tls = { certFile, keyFile };
    expect(advertisedUrl({ advertiseUrl: undefined, host: "10.0.0.11", tls }, 8443)).toBe("https://10.0.0.11:8443");
    expect(advertisedUrl({ advertiseUrl: undefined, host: "127.0.0.1", tls: undefined }, 9000)).toBe(
      "http://127.0.0.1:9000",
    );
    const explicit = "https://gpu-1.internal:443";
    expect(advertisedUrl({ advertiseUrl: explicit, host: "10.0.0.11", tls }, 8443)).toBe(explicit);
  });
});
