import { describe, expect, it } from "vitest";
import type { ReplayRun } from "../../../bench/trace/replay.ts";
import { scaleTrace } from "../../../bench/trace/scale.ts";
import { reuseOverTime, summarise } from "../../../bench/trace/summary.ts";
import type { TraceRequest } from "../../../bench/trace/trace-file.ts";
import { traceFiles, traceJson, traceSection, traceSummaryRows } from "../../../bench/trace/trace-report.ts";

const trace: TraceRequest[] = [
  { index: 0, timestamp: 0, inputLength: 1100, outputLength: 100, hashIds: [0, 1, 2] },
  { index: 1, timestamp: 1000, inputLength: 2300, outputLength: 50, hashIds: [0, 1, 8, 4, 5] },
];
const scaled = scaleTrace(trace, { blockTokens: 32, maxRequests: 10, spanSeconds: 1, seed: 1 });

function run(target: string, cached: [number, number], ttft: [number, number], queueMs?: number): ReplayRun {
  return {
    target,
    wallMs: 2000,
    failures: [],
    requests: [0, 1].map((id) => ({
      id,
      sentMs: id * 1000,
      lateMs: 0,
      inFlight: 0,
      ttftMs: ttft[id] as number,
      e2eMs: (ttft[id] as number) + 100,
      promptTokens: (scaled.requests[id]?.inputLength ?? 0) + 5,
      cachedTokens: cached[id] as number,
      outputTokens: 4,
      ...(queueMs === undefined ? {} : { queueMs }),
    })),
  };
}

describe("trace replay report", () => {
  const frontierRun = run("Frontier, 1 worker", [0, 80], [300, 40]);
  const peerRun = run("llama-server", [0, 64], [320, 90], 12);
  const systems = [
    {
      key: "frontier",
      run: frontierRun,
      summary: summarise(scaled, frontierRun, 7),
      decisions: [["cold", 1] as const],
    },
    { key: "llama_server", run: peerRun, summary: summarise(scaled, peerRun), decisions: [] },
  ];
  const context = {
    tracePath: "t.jsonl",
    fullRequests: 2,
    fullCeiling: 0.3,
    scaled,
    contextSize: 512,
    peerPrompt: "framed" as const,
    framingNotes: [],
  };

  it("summarises reuse in both readings against the scaled ceilings", () => {
    const f = systems[0]?.summary;
    const prompt = scaled.requests.reduce((s, r) => s + r.inputLength + 5, 0);
    expect(f?.reuse).toBeCloseTo(80 / prompt, 12);
    expect(f?.prefilled_tokens).toBe(prompt - 80);
    // Blocks only: the 80 cached tokens are capped at the request's block ceiling (64).
    const input = scaled.requests.reduce((s, r) => s + r.inputLength, 0);
    expect(f?.reuse_blocks_only).toBeCloseTo(64 / input, 12);
    expect(f?.reuse_vs_ceiling).toBeCloseTo(80 / prompt / scaled.ceiling.withOwnOutput, 12);
    expect(f?.queue_ms.mean).toBe(7);
    expect(systems[1]?.summary.queue_ms.mean).toBe(12);
    expect(reuseOverTime(frontierRun).at(-1)?.[1]).toBeCloseTo(80 / prompt, 12);
  });

  it("writes the JSON report the issue asks for", () => {
    const json = JSON.parse(JSON.stringify(traceJson(context, systems))) as Record<string, Record<string, unknown>>;
    expect(json.trace?.requests).toBe(2);
    expect(json.trace?.ceiling_reuse).toBeCloseTo(scaled.ceiling.blocks, 12);
    expect(json.trace?.ceiling_reuse_with_own_output).toBeCloseTo(scaled.ceiling.withOwnOutput, 12);
    for (const key of ["frontier", "llama_server"]) {
      const system = json[key] as { reuse: number; prefilled_tokens: number; ttft_ms: Record<string, number> };
      expect(typeof system.reuse).toBe("number");
      expect(system.prefilled_tokens).toBeGreaterThan(0);
      expect(Object.keys(system.ttft_ms)).toEqual(["p50", "p90", "p99"]);
    }
    expect((json.frontier as { ttft_ms: { p90: number } }).ttft_ms.p90).toBe(300);
    expect((json.frontier as { decisions: Record<string, number> }).decisions).toEqual({ cold: 1 });
  });

  it("puts ratios in the bench table, the scaling in the section and a chart in the files", () => {
    const rows = traceSummaryRows(context, systems);
    expect(rows.map((r) => r.measure)).toContain("llama-server / Frontier (1 worker) p90 TTFT");
    expect(rows.find((r) => r.measure.endsWith("p90 TTFT"))?.value).toBe("1.07x");
    const section = traceSection(context, systems);
    expect(section).toContain("blocks of 32 tokens for the trace's 512");
    expect(section).toContain("| Frontier, 1 worker | 2 (0) |");
    const svg = traceFiles(scaled, systems)["trace-replay.svg"] ?? "";
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<polyline/g)?.length).toBe(2 * 2 + 2);
  });
});
