/**
 * A heartbeat that the edge answers late still counts (gpu-worker/pool/heartbeat.ts). The pool takes a
 * worker for down after `HEARTBEAT_TIMEOUT_MS` (6 s) without one; a worker that gave up on each
 * heartbeat after its interval (0.5–2 s) lost every one while a crowded edge took longer than that to
 * answer, and the pool then refused every new session with 529 although both workers were serving
 * (the 256-agent load run: 421 heartbeats of ~2,400 landed in 10 minutes; issue-42-load.md, "After").
 * A real local HTTP server plays a slow edge.
 */
import { once } from "node:events";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { startHeartbeat } from "../../../gpu-worker/pool/heartbeat.ts";
import { WorkerReportSchema } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

let server: http.Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** An edge that answers each heartbeat `delayMs` after it arrived; counts those it answered. */
async function slowEdge(delayMs: number): Promise<{ url: string; answered: () => number }> {
  let answered = 0;
  server = http.createServer(async (req, res) => {
    for await (const _ of req) {
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    answered++;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answered: () => answered };
}

describe("the worker's heartbeat to a slow edge", () => {
  it("waits for an answer that comes after its interval, within the pool's staleness bound", async () => {
    const edge = await slowEdge(2500);
    const heartbeat = startHeartbeat({ edgeUrl: edge.url, token: "t", intervalMs: 500 }, () =>
      create(WorkerReportSchema, { id: "worker-1", url: "http://127.0.0.1:1" }),
    );
    try {
      expect(await heartbeat.beat()).toBe(true);
      expect(edge.answered()).toBeGreaterThanOrEqual(1);
    } finally {
      await heartbeat.stop(false);
    }
  }, 20_000);
});
