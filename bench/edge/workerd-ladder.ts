/**
 * What workerd's own parts cost on this machine, without Frontier's code: a minimal Worker in
 * Miniflare on its own socket (as scripts/workerd-edge.ts runs the edge) answering a 500-byte POST
 * after nothing, a Durable Object RPC, the same RPC writing one SQLite row, a fetch to a Node HTTP
 * server, the write then the fetch, and both at once; and the Node server called directly. Paths
 * alternate, each request `SETTLE_MS` after the previous one. The edge's own cost is its turn
 * (bench/edge/edge-alone.ts) minus the rung that does what it does (write, then fetch).
 *   `tsx bench/edge/workerd-ladder.ts [--rounds 200]`
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { freePort } from "../../scripts/stack.ts";
import { percentile } from "../stats.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "200" } } });
const rounds = Number(values.rounds);
const WARM_UP = 30;
const SETTLE_MS = 10;

const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v INTEGER)");
    this.sql.exec("INSERT OR IGNORE INTO t VALUES (1, 0)");
  }
  async nothing() { return 1; }
  async write() { this.sql.exec("UPDATE t SET v = ?", Date.now()); return 1; }
}
export default {
  async fetch(request, env) {
    await request.text();
    const counter = () => env.COUNTER.getByName("one");
    const upstream = () => fetch(env.UPSTREAM, { method: "POST", body: "x".repeat(100) }).then((r) => r.text());
    switch (new URL(request.url).pathname) {
      case "/nothing": break;
      case "/rpc": await counter().nothing(); break;
      case "/rpc-write": await counter().write(); break;
      case "/fetch": await upstream(); break;
      case "/write-then-fetch": await counter().write(); await upstream(); break;
      case "/write-and-fetch": await Promise.all([counter().write(), upstream()]); break;
      default: return new Response("no such rung", { status: 404 });
    }
    return new Response("ok");
  },
};`;

// A response in three writes, like a short gRPC-Web stream.
const upstream = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/grpc-web+proto" });
    res.write("a".repeat(40));
    setImmediate(() => {
      res.write("b".repeat(20));
      res.end("c".repeat(30));
    });
  });
});
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
const stateDir = mkdtempSync(join(tmpdir(), "frontier-workerd-ladder-"));
const port = await freePort();
const miniflare = new Miniflare(
  convertV4MiniflareOptions({
    modules: true,
    script: SCRIPT,
    compatibilityDate: "2025-04-01",
    durableObjects: { COUNTER: { className: "Counter", useSQLite: true } },
    resourcePersistencePath: stateDir,
    bindings: { UPSTREAM: upstreamUrl },
    unsafeDirectSockets: [{ host: "127.0.0.1", port }],
    host: "127.0.0.1",
    port: 0,
  }),
);
try {
  await miniflare.ready;
  const rungs = ["/nothing", "/rpc", "/rpc-write", "/fetch", "/write-then-fetch", "/write-and-fetch"];
  const targets = [...rungs.map((r) => [r, `http://127.0.0.1:${port}${r}`]), ["Node server directly", upstreamUrl]];
  const samples = new Map<string, number[]>();
  for (let round = 0; round < WARM_UP + rounds; round++) {
    for (const [name, url] of round % 2 ? [...targets].reverse() : targets) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const t0 = performance.now();
      const response = await fetch(url as string, { method: "POST", body: "y".repeat(500) });
      await response.text();
      if (response.status !== 200) throw new Error(`${name} answered ${response.status}`);
      if (round >= WARM_UP)
        samples.set(name as string, [...(samples.get(name as string) ?? []), performance.now() - t0]);
    }
  }
  process.stdout.write(`workerd's parts, ${rounds} rounds (POST of 500 bytes; ms)\n`);
  for (const [name, ms] of samples) {
    const q = (p: number) => percentile(ms, p).toFixed(2);
    process.stdout.write(`${name.padEnd(22)} p50 ${q(50)} (p25 ${q(25)}, p75 ${q(75)})\n`);
  }
} finally {
  await miniflare.dispose();
  upstream.close();
  rmSync(stateDir, { recursive: true, force: true });
}
