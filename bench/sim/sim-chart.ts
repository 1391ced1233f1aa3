/** The simulation's chart: hit rate and TTFT p90 against workers, one line per policy (plain SVG). */
import type { SimPolicy } from "./sim-result.ts";

export interface ChartPoint {
  policy: SimPolicy;
  workers: number;
  hitRate: number;
  ttftP90Ms: number;
  ceiling: number;
}

const COLORS: Record<SimPolicy, string> = {
  frontier: "#1f77b4",
  "round-robin": "#d62728",
  "least-loaded": "#2ca02c",
  "llama-server": "#ff7f0e",
};

function panel(
  points: readonly ChartPoint[],
  x0: number,
  title: string,
  value: (p: ChartPoint) => number,
  max: number,
  unit: string,
  ceiling: boolean,
): string {
  const workers = [...new Set(points.map((p) => p.workers))].sort((a, b) => a - b);
  const w = 360;
  const h = 220;
  const px = (n: number) => x0 + 50 + (workers.length <= 1 ? w / 2 : (workers.indexOf(n) / (workers.length - 1)) * w);
  const py = (v: number) => 40 + h - (Math.min(v, max) / max) * h;
  const out = [`<text x="${x0 + 50 + w / 2}" y="24" text-anchor="middle" font-size="14">${title}</text>`];
  out.push(`<line x1="${x0 + 50}" y1="${40 + h}" x2="${x0 + 50 + w}" y2="${40 + h}" stroke="#333"/>`);
  out.push(`<line x1="${x0 + 50}" y1="40" x2="${x0 + 50}" y2="${40 + h}" stroke="#333"/>`);
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    out.push(
      `<text x="${x0 + 44}" y="${py(v) + 4}" text-anchor="end" font-size="10">${unit === "%" ? `${(v * 100).toFixed(0)}%` : `${(v / 1000).toFixed(1)} s`}</text>`,
    );
  }
  for (const n of workers) out.push(`<text x="${px(n)}" y="${56 + h}" text-anchor="middle" font-size="10">${n}</text>`);
  out.push(`<text x="${x0 + 50 + w / 2}" y="${74 + h}" text-anchor="middle" font-size="11">workers</text>`);
  const lines: [string, string, (p: ChartPoint) => number, string][] = Object.entries(COLORS).map(([policy, color]) => [
    policy,
    color,
    value,
    "",
  ]);
  if (ceiling) lines.push(["frontier", "#999", (p) => p.ceiling, ' stroke-dasharray="4 3"']);
  for (const [policy, color, get, dash] of lines) {
    const series = points.filter((p) => p.policy === policy).sort((a, b) => a.workers - b.workers);
    const path = series.map((p) => `${px(p.workers).toFixed(1)},${py(get(p)).toFixed(1)}`).join(" ");
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${path}"/>`);
  }
  return out.join("\n");
}

export function simChart(points: readonly ChartPoint[], caption: string): string {
  const maxTtft = Math.max(1, ...points.map((p) => p.ttftP90Ms)) * 1.1;
  const maxHit = Math.min(1, Math.max(0.1, ...points.map((p) => Math.max(p.hitRate, p.ceiling))) * 1.15);
  const legend = [...Object.entries(COLORS), ["capacity-bound ceiling", "#999"] as const]
    .map(
      ([name, color], i) =>
        `<rect x="${40 + i * 165}" y="330" width="14" height="4" fill="${color}"/><text x="${60 + i * 165}" y="335" font-size="11">${name}</text>`,
    )
    .join("\n");
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="880" height="380" viewBox="0 0 880 380" font-family="sans-serif">`,
    `<rect width="880" height="380" fill="white"/>`,
    panel(points, 0, "hit rate (reused / input tokens)", (p) => p.hitRate, maxHit, "%", true),
    panel(points, 440, "TTFT p90", (p) => p.ttftP90Ms, maxTtft, "ms", false),
    legend,
    `<text x="440" y="365" text-anchor="middle" font-size="10">${caption.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</text>`,
    "</svg>",
    "",
  ].join("\n");
}
