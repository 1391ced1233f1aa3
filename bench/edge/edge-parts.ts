/**
 * What each piece of the edge's per-turn work costs inside workerd, warm: a Worker
 * (bench/edge/edge-parts-worker.ts, bundled by wrangler) runs one piece N times per request, and this
 * client times N = 50 against N = 0 on the same path, so workerd's own per-request cost cancels
 * out. The pieces: hashing, parsing and validating a 40-message Messages request, normalising and
 * serialising it, rendering an instant worker's three events as SSE, an SSE TransformStream, the
 * Generate call's client against an in-memory gRPC-Web answer (connect-web's and the edge's direct
 * reader), a log line and a timer turn. Medians of `--rounds` alternating measurements.
 *   `tsx bench/edge/edge-parts.ts [--rounds 25]`
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { freePort, REPO_ROOT } from "../../scripts/stack.ts";
import { bundle, warningsAndErrorsToStderr } from "../../scripts/workerd-edge.ts";
import { percentile } from "../stats.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "25" } } });
const rounds = Number(values.rounds);
const N = 50;

const dir = mkdtempSync(join(tmpdir(), "frontier-edge-parts-"));
const config = join(dir, "wrangler.toml");
writeFileSync(
  config,
  [
    'name = "frontier-edge-parts"',
    `main = "${join(REPO_ROOT, "bench/edge/edge-parts-worker.ts")}"`,
    'compatibility_date = "2026-04-01"',
    'compatibility_flags = ["nodejs_compat"]',
  ].join("\n"),
);
await bundle(join(dir, "bundle"), config);
const port = await freePort();
const miniflare = new Miniflare(
  convertV4MiniflareOptions({
    modules: true,
    modulesRoot: join(dir, "bundle"),
    scriptPath: join(dir, "bundle", "edge-parts-worker.js"),
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat"],
    unsafeDirectSockets: [{ host: "127.0.0.1", port }],
    host: "127.0.0.1",
    port: 0,
    handleStructuredLogs: warningsAndErrorsToStderr,
  }),
);
try {
  await miniflare.ready;
  const base = `http://127.0.0.1:${port}`;
  const parts = (await (await fetch(base)).json()) as string[];
  const samples = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const part of parts) {
      for (const n of round % 2 ? [N, 0] : [0, N]) {
        const t0 = performance.now();
        const response = await fetch(`${base}/${encodeURIComponent(part)}?n=${n}`);
        await response.text();
        if (response.status !== 200) throw new Error(`${part} answered ${response.status}`);
        const key = `${part}\u0000${n}`;
        samples.set(key, [...(samples.get(key) ?? []), performance.now() - t0]);
      }
    }
  }
  process.stdout.write(`the edge's parts in workerd, warm (40-message request; µs per call, median of ${rounds})\n`);
  for (const part of parts) {
    const at = (n: number) => percentile(samples.get(`${part}\u0000${n}`) ?? [], 50);
    process.stdout.write(`${part.padEnd(40)} ${(((at(N) - at(0)) / N) * 1000).toFixed(1).padStart(7)} µs\n`);
  }
} finally {
  await miniflare.dispose();
  rmSync(dir, { recursive: true, force: true });
}
