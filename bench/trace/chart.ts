/**
 * The trace replay's chart, hand-written SVG: the TTFT CDF of each system (log-scale ms) beside
 * cumulative prefix reuse over replay time, with the scaled trace's two ceilings as dashed lines.
 */
export interface TraceChartSeries {
  name: string;
  color: string;
  ttftMs: readonly number[];
  /** [seconds, cumulative reuse fraction]. */
  reuse: ReadonlyArray<readonly [number, number]>;
}

const PANEL_W = 420;
const H = 380;
const M = { left: 62, right: 18, top: 48, bottom: 78 };

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function polyline(points: ReadonlyArray<readonly [number, number]>, color: string, dash = ""): string {
  const d = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ");
  return `<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""} points="${d}"/>`;
}

export function traceChart(
  title: string,
  series: readonly TraceChartSeries[],
  ceilings: { blocks: number; withOwnOutput: number },
): string {
  const plotW = PANEL_W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * PANEL_W}" height="${H}" viewBox="0 0 ${2 * PANEL_W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${2 * PANEL_W}" height="${H}" fill="white"/>`,
    `<text x="${PANEL_W}" y="22" text-anchor="middle" font-size="15">${esc(title)}</text>`,
  ];
  // Left: TTFT CDF, x log10(ms).
  const all = series.flatMap((s) => s.ttftMs).filter((v) => v > 0 && Number.isFinite(v));
  const lo = 10 ** Math.floor(Math.log10(Math.max(1, Math.min(...all, 10))));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...all, lo * 10)));
  const lx = (ms: number) => M.left + ((Math.log10(ms) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotW;
  const y01 = (f: number) => M.top + plotH - f * plotH;
  const axes = (x0: number, xLabel: string, yLabel: string) => {
    out.push(`<rect x="${x0 + M.left}" y="${M.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#444"/>`);
    for (let f = 0; f <= 1.0001; f += 0.25) {
      out.push(`<line x1="${x0 + M.left}" x2="${x0 + M.left + plotW}" y1="${y01(f)}" y2="${y01(f)}" stroke="#ddd"/>`);
      out.push(`<text x="${x0 + M.left - 6}" y="${y01(f) + 4}" text-anchor="end">${f.toFixed(2)}</text>`);
    }
    out.push(
      `<text x="${x0 + M.left + plotW / 2}" y="${H - M.bottom + 34}" text-anchor="middle">${esc(xLabel)}</text>`,
    );
    out.push(
      `<text transform="translate(${x0 + 16},${M.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
    );
  };
  axes(0, "time to first token, ms (log)", "fraction of requests");
  for (let decade = lo; decade <= hi * 1.0001; decade *= 10) {
    out.push(`<text x="${lx(decade)}" y="${M.top + plotH + 16}" text-anchor="middle">${decade}</text>`);
  }
  for (const s of series) {
    const sorted = [...s.ttftMs].filter((v) => v > 0).sort((a, b) => a - b);
    out.push(
      polyline(
        sorted.map((v, i): [number, number] => [lx(v), y01((i + 1) / sorted.length)]),
        s.color,
      ),
    );
  }
  // Right: cumulative reuse over replay time.
  const x0 = PANEL_W;
  const tMax = Math.max(1, ...series.flatMap((s) => s.reuse.map(([t]) => t))) * 1.02;
  const rx = (t: number) => x0 + M.left + (t / tMax) * plotW;
  axes(x0, "replay time, s", "prefix reuse (cached / prompt tokens)");
  for (let i = 0; i <= 4; i++) {
    const t = (tMax * i) / 4;
    out.push(`<text x="${rx(t)}" y="${M.top + plotH + 16}" text-anchor="middle">${t.toFixed(0)}</text>`);
  }
  for (const [value, label] of [
    [ceilings.withOwnOutput, "ceiling with own output"],
    [ceilings.blocks, "ceiling, trace blocks"],
  ] as const) {
    out.push(
      polyline(
        [
          [rx(0), y01(value)],
          [rx(tMax), y01(value)],
        ],
        "#888",
        "5,4",
      ),
    );
    out.push(`<text x="${rx(tMax) - 4}" y="${y01(value) - 4}" text-anchor="end" fill="#666">${esc(label)}</text>`);
  }
  for (const s of series)
    out.push(
      polyline(
        s.reuse.map(([t, f]): [number, number] => [rx(t), y01(f)]),
        s.color,
      ),
    );
  // Legend under both panels.
  series.forEach((s, i) => {
    const x = M.left + i * 200;
    out.push(`<line x1="${x}" x2="${x + 24}" y1="${H - 16}" y2="${H - 16}" stroke="${s.color}" stroke-width="3"/>`);
    out.push(`<text x="${x + 30}" y="${H - 12}">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
