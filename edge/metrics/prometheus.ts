/** The Prometheus text exposition format (0.0.4) for the edge's samples. */
import { EDGE_METRICS, type MetricIncrement, type MetricInfo } from "./catalog.ts";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Render samples grouped by metric family, each with its HELP and TYPE. */
export function renderPrometheus(samples: readonly MetricIncrement[]): string {
  const families = new Map<string, MetricIncrement[]>();
  for (const sample of samples) {
    const family = familyOf(sample.name);
    families.set(family, [...(families.get(family) ?? []), sample]);
  }
  const lines: string[] = [];
  for (const [family, members] of [...families].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const info = (EDGE_METRICS as Record<string, MetricInfo>)[family];
    if (info) lines.push(`# HELP ${family} ${info.help}`, `# TYPE ${family} ${info.type}`);
    const ordered = info?.type === "histogram" ? bySeries(members) : members;
    for (const s of ordered) lines.push(`${s.name}${renderLabels(s.labels)} ${formatNumber(s.value)}`);
  }
  return `${lines.join("\n")}\n`;
}

const HISTOGRAM_SUFFIXES = ["_bucket", "_sum", "_count"];

/** A histogram's samples one series at a time: its buckets (in the order given), then `_sum`, `_count`. */
function bySeries(members: readonly MetricIncrement[]): MetricIncrement[] {
  const series = (s: MetricIncrement) => {
    const { le: _le, ...labels } = s.labels;
    return JSON.stringify(Object.entries(labels).sort());
  };
  const rank = (s: MetricIncrement) => HISTOGRAM_SUFFIXES.findIndex((suffix) => s.name.endsWith(suffix));
  return [...members].sort((a, b) => {
    const [sa, sb] = [series(a), series(b)];
    return sa < sb ? -1 : sa > sb ? 1 : rank(a) - rank(b);
  });
}

function familyOf(name: string): string {
  for (const suffix of HISTOGRAM_SUFFIXES) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && (EDGE_METRICS as Record<string, MetricInfo>)[base]?.type === "histogram") return base;
  }
  return name;
}

function renderLabels(labels: Record<string, string>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  const escapeValue = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
  return `{${entries.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(",")}}`;
}

export function formatNumber(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  return String(value);
}
