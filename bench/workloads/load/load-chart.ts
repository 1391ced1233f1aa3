/**
 * The load run over time, as an SVG: per worker, turns in progress (solid: `activeRequests`, the
 * sessions busy with a request, less `queueDepth`, those waiting for a sequence: turns running, parking
 * or restoring), requests queued (dashed) and sequences held by a session (dotted, running or idle),
 * from the ~250 ms samples of GET /admin/workers; grey bands where requests were queued
 * and no turn completed for 30 s or more (load-figures.ts STALL_MS); a line at each wave's start.
 */
import { STALL_MS } from "./load-figures.ts";
import type { PoolSample } from "./pool-sampler.ts";

const W = 880;
const H = 440;
const M = { left: 60, right: 20, top: 48, bottom: 96 };
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

export interface ChartInput {
  title: string;
  samples: readonly PoolSample[];
  waveStartsMs: readonly number[];
  /** Intervals [from, to] ms with requests queued and no turn completing (stalls). */
  stalls: readonly (readonly [number, number])[];
}

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Sessions busy with a request that is not waiting for a sequence: turns running, parking or restoring. */
function running(w: PoolSample["workers"][number]): number {
  return Math.max(0, w.activeRequests - w.queueDepth);
}

function niceStep(span: number, ticks: number): number {
  const raw = span / ticks;
  const mag = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  return ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
}

/** At most `max` points a series: the samples in buckets, each worker's counts at their bucket maximum. */
function thin(samples: readonly PoolSample[], max: number): PoolSample[] {
  const size = Math.ceil(samples.length / max);
  if (size <= 1) return [...samples];
  const out: PoolSample[] = [];
  for (let i = 0; i < samples.length; i += size) {
    const bucket = samples.slice(i, i + size);
    const ids = [...new Set(bucket.flatMap((s) => s.workers.map((w) => w.id)))];
    out.push({
      atMs: bucket[0]?.atMs ?? 0,
      workers: ids.map((id) => {
        const all = bucket.flatMap((s) => s.workers.filter((w) => w.id === id));
        const peak = (pick: (w: (typeof all)[number]) => number) => Math.max(...all.map(pick));
        return {
          ...(all[0] as (typeof all)[number]),
          queueDepth: peak((w) => w.queueDepth),
          activeRequests: peak((w) => w.activeRequests),
          // Held at its peak: free at its minimum.
          sequencesFree: -peak((w) => -w.sequencesFree),
        };
      }),
    });
  }
  return out;
}

export function loadChart(input: ChartInput): string {
  const samples = thin(input.samples, 500);
  const ids = [...new Set(samples.flatMap((s) => s.workers.map((w) => w.id)))].sort();
  const tMax = Math.max(1000, ...samples.map((s) => s.atMs)) / 1000;
  const yMax = Math.max(4, ...samples.flatMap((s) => s.workers.flatMap((w) => [w.queueDepth, w.sequencesTotal])));
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const px = (seconds: number) => M.left + (seconds / tMax) * plotW;
  const py = (y: number) => M.top + plotH - (y / (yMax * 1.08)) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${M.left + plotW / 2}" y="22" text-anchor="middle" font-size="14">${esc(input.title)}</text>`,
  ];
  for (const [from, to] of input.stalls) {
    out.push(
      `<rect x="${px(from / 1000).toFixed(1)}" y="${M.top}" width="${Math.max(1, px(to / 1000) - px(from / 1000)).toFixed(1)}" height="${plotH}" fill="#e6e6e6"/>`,
    );
  }
  const yStep = niceStep(yMax, 6);
  for (let y = 0; y <= yMax * 1.08; y += yStep) {
    out.push(
      `<line x1="${M.left}" x2="${M.left + plotW}" y1="${py(y)}" y2="${py(y)}" stroke="#eee"/>`,
      `<text x="${M.left - 8}" y="${py(y) + 4}" text-anchor="end">${+y.toPrecision(3)}</text>`,
    );
  }
  const xStep = niceStep(tMax, 8);
  for (let x = 0; x <= tMax; x += xStep) {
    out.push(`<text x="${px(x)}" y="${M.top + plotH + 18}" text-anchor="middle">${+x.toPrecision(3)}</text>`);
  }
  for (const [i, start] of input.waveStartsMs.entries()) {
    const x = px(start / 1000).toFixed(1);
    out.push(
      `<line x1="${x}" x2="${x}" y1="${M.top}" y2="${M.top + plotH}" stroke="#999" stroke-dasharray="2,3"/>`,
      `<text x="${x}" y="${M.top - 4}" text-anchor="middle" fill="#666">wave ${i + 1}</text>`,
    );
  }
  for (const [i, id] of ids.entries()) {
    const color = COLORS[i % COLORS.length];
    const series = (pick: (w: PoolSample["workers"][number]) => number) =>
      samples
        .flatMap((s) => {
          const w = s.workers.find((x) => x.id === id);
          return w ? [`${px(s.atMs / 1000).toFixed(1)},${py(pick(w)).toFixed(1)}`] : [];
        })
        .join(" ");
    out.push(
      `<polyline points="${series((w) => w.sequencesTotal - w.sequencesFree)}" fill="none" stroke="${color}" stroke-width="1" stroke-dasharray="1,2"/>`,
      `<polyline points="${series(running)}" fill="none" stroke="${color}" stroke-width="1.8"/>`,
      `<polyline points="${series((w) => w.queueDepth)}" fill="none" stroke="${color}" stroke-width="1.8" stroke-dasharray="6,3"/>`,
    );
    // The legend runs under the plot, one worker per column pair.
    const ly = H - 40 + i * 18;
    const legend = (x: number, dash: string, width: number, text: string) => [
      `<line x1="${x}" x2="${x + 24}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ""}/>`,
      `<text x="${x + 30}" y="${ly + 4}">${text}</text>`,
    ];
    out.push(
      `<text x="${M.left}" y="${ly + 4}" fill="${color}">${esc(id)}</text>`,
      ...legend(M.left + 70, "", 2, "turns in progress"),
      ...legend(M.left + 230, "6,3", 2, "requests queued"),
      ...legend(M.left + 410, "1,2", 1, "sequences held by a session"),
    );
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${M.left + plotW / 2}" y="${M.top + plotH + 36}" text-anchor="middle">seconds (grey: requests queued and no turn completed for ≥ ${STALL_MS / 1000} s)</text>`,
    `<text x="16" y="${M.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${M.top + plotH / 2})">count (GET /admin/workers)</text>`,
    "</svg>",
    "",
  );
  return out.join("\n");
}
