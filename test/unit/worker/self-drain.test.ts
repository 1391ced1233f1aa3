/**
 * The worker's shutdown drain goes through the edge with the worker's own pool credential
 * (gpu-worker/pool/self-drain.ts): it posts its id and region to /internal/pool/drain with the pool
 * token as bearer (never an admin token), reads the edge's report, and a refusing or unreachable edge
 * is an outcome, not a throw, so the shutdown's save still runs. A real local HTTP server plays the edge.
 */
import { once } from "node:events";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { drainThroughEdge } from "../../../gpu-worker/pool/self-drain.ts";

interface Seen {
  method: string | undefined;
  path: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

let server: http.Server | undefined;
afterEach(async () => {
  server?.close();
  server = undefined;
});

async function edge(status: number, answer: unknown): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({
      method: req.method,
      path: req.url,
      authorization: req.headers.authorization,
      body: JSON.parse(Buffer.concat(chunks).toString("utf8")),
    });
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const options = { token: "pool-token-of-gpu-7-abcdef", workerId: "gpu-7", region: "eu", timeoutMs: 5000 };

describe("drainThroughEdge", () => {
  it("posts its own id and region with its pool token and reads the edge's report", async () => {
    const { url, seen } = await edge(200, { state: "drained", moved: 3, handed_over: 3 });
    const outcome = await drainThroughEdge({ ...options, edgeUrl: url });
    expect(outcome).toEqual({ ok: true, status: 200, moved: 3 });
    expect(seen).toEqual([
      {
        method: "POST",
        path: "/internal/pool/drain",
        authorization: "Bearer pool-token-of-gpu-7-abcdef",
        body: { id: "gpu-7", region: "eu" },
      },
    ]);
  });

  it("a refusal is an outcome with its status, not a throw", async () => {
    const { url } = await edge(401, { type: "error", error: { type: "authentication_error", message: "no" } });
    expect(await drainThroughEdge({ ...options, edgeUrl: url })).toEqual({ ok: false, status: 401, moved: 0 });
  });

  it("an unreachable edge is an outcome too", async () => {
    const { url } = await edge(200, {});
    server?.close();
    await once(server as http.Server, "close");
    expect(await drainThroughEdge({ ...options, edgeUrl: url })).toEqual({ ok: false, status: undefined, moved: 0 });
  });
});
