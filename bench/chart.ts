/** A small hand-written SVG line chart: linear x, log-scale y, labelled axes, one line per series. */

export interface ChartSeries {
  name: string;
  color: string;
  /** [x, y] pairs; y must be positive (log scale). */
  points: ReadonlyArray<readonly [number, number]>;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly ChartSeries[];
}

const W = 720;
const H = 440;
const M = { left: 80, right: 30, top: 44, bottom: 60 };

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function niceStep(span: number): number {
  const raw = span / 6;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
}

/** Milliseconds as "200 ms", "1.1 s", "235 s". */
function msLabel(ms: number): string {
  if (ms < 1000) return `${+ms.toPrecision(3)} ms`;
  return `${+(ms / 1000).toPrecision(3)} s`;
}

function label(value: number): string {
  if (value >= 1000) return `${+(value / 1000).toFixed(1)}k`;
  return String(+value.toPrecision(3));
}

export function svgLineChart(spec: ChartSpec): string {
  const points = spec.series.flatMap((s) => s.points).filter(([, y]) => y > 0 && Number.isFinite(y));
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const xMax = Math.max(1, ...xs) * 1.05;
  const yLo = 10 ** Math.floor(Math.log10(Math.max(1e-3, Math.min(...ys))));
  const yHi = 10 ** Math.ceil(Math.log10(Math.max(...ys, 10)));
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const px = (x: number) => M.left + (x / xMax) * plotW;
  const py = (y: number) =>
    M.top + plotH - ((Math.log10(y) - Math.log10(yLo)) / (Math.log10(yHi) - Math.log10(yLo))) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${M.left + (W - M.left - M.right) / 2}" y="24" text-anchor="middle" font-size="15">${esc(spec.title)}</text>`,
  ];
  for (let decade = yLo; decade <= yHi * 1.0001; decade *= 10) {
    const y = py(decade);
    out.push(
      `<line x1="${M.left}" x2="${M.left + plotW}" y1="${y}" y2="${y}" stroke="#ddd"/>`,
      `<text x="${M.left - 8}" y="${y + 4}" text-anchor="end">${msLabel(decade)}</text>`,
    );
  }
  const step = niceStep(xMax);
  for (let x = 0; x <= xMax; x += step) {
    out.push(
      `<line x1="${px(x)}" x2="${px(x)}" y1="${M.top}" y2="${M.top + plotH}" stroke="#eee"/>`,
      `<text x="${px(x)}" y="${M.top + plotH + 18}" text-anchor="middle">${label(x)}</text>`,
    );
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${M.left + plotW / 2}" y="${H - 16}" text-anchor="middle">${esc(spec.xLabel)}</text>`,
    `<text x="20" y="${M.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 20 ${M.top + plotH / 2})">${esc(spec.yLabel)}</text>`,
  );
  spec.series.forEach((s, i) => {
    const pts = s.points.filter(([, y]) => y > 0 && Number.isFinite(y));
    const path = pts.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ");
    out.push(`<polyline points="${path}" fill="none" stroke="${s.color}" stroke-width="2.5"/>`);
    for (const [x, y] of pts) {
      out.push(
        `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="4" fill="${s.color}"/>`,
        px(x) > M.left + plotW * 0.8
          ? `<text x="${(px(x) - 8).toFixed(1)}" y="${(py(y) - 8).toFixed(1)}" text-anchor="end" fill="${s.color}">${msLabel(y)}</text>`
          : `<text x="${(px(x) + 6).toFixed(1)}" y="${(py(y) - 8).toFixed(1)}" fill="${s.color}">${msLabel(y)}</text>`,
      );
    }
    const ly = M.top + 18 + i * 20;
    out.push(
      `<line x1="${M.left + 14}" x2="${M.left + 38}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2.5"/>`,
      `<text x="${M.left + 44}" y="${ly + 4}">${esc(s.name)}</text>`,
    );
  });
  out.push("</svg>", "");
  return out.join("\n");
}
