/**
 * The edge's histograms as the EdgeMetricsDO stores them: hits per bucket (an observation adds 1 to
 * the one bucket it falls in, plus `_sum` and `_count`), summed into Prometheus's cumulative
 * `_bucket` series when read. Three rows written per observation instead of one per bucket.
 */
import {
  EDGE_METRICS,
  type EdgeMetricName,
  type MetricIncrement,
  type MetricInfo,
  type MetricSample,
} from "./catalog.ts";
import { formatNumber } from "./prometheus.ts";

/** Hits of one bucket: `labels` without `le`. */
export interface BucketHits {
  family: string;
  labels: Record<string, string>;
  le: string;
  value: number;
}

/** Increments of one observation: its bucket (the smallest `le` at or above it), `_sum`, `_count`. */
export function observation(name: EdgeMetricName, labels: Record<string, string>, value: number): MetricIncrement[] {
  const le = boundsOf(name).find((bound) => value <= bound) ?? Number.POSITIVE_INFINITY;
  return [
    { name: `${name}_bucket`, labels: { ...labels, le: formatNumber(le) }, value: 1 },
    { name: `${name}_sum`, labels, value },
    { name: `${name}_count`, labels, value: 1 },
  ];
}

/** The histogram family of a `_bucket` series' name, or undefined for any other name. */
export function bucketFamily(name: string): string | undefined {
  if (!name.endsWith("_bucket")) return undefined;
  const family = name.slice(0, -"_bucket".length);
  return boundsOf(family).length > 0 ? family : undefined;
}

/**
 * Cumulative `_bucket` samples from per-bucket hits: every bound of the family's catalog entry, in
 * increasing order, `+Inf` last (equal to the series' `_count`). A stored bound the catalog no longer
 * lists still counts toward every bound above it.
 */
export function cumulativeBuckets(hits: readonly BucketHits[]): MetricSample[] {
  const out: MetricSample[] = [];
  for (const own of groupBySeries(hits)) {
    const { family, labels } = own[0] as BucketHits;
    for (const bound of boundsOf(family)) {
      const value = own.filter((h) => parseBound(h.le) <= bound).reduce((sum, h) => sum + h.value, 0);
      out.push({ name: `${family}_bucket`, labels: { ...labels, le: formatNumber(bound) }, value });
    }
  }
  return out;
}

/** Per-bucket hits from cumulative `_bucket` samples (rows an older edge stored that way). */
export function hitsOfCumulative(samples: readonly MetricSample[]): BucketHits[] {
  const cumulative = samples.flatMap((sample): BucketHits[] => {
    const family = bucketFamily(sample.name);
    const { le = "+Inf", ...labels } = sample.labels;
    return family ? [{ family, labels, le, value: sample.value }] : [];
  });
  const out: BucketHits[] = [];
  for (const buckets of groupBySeries(cumulative)) {
    buckets.sort((a, b) => parseBound(a.le) - parseBound(b.le));
    let below = 0;
    for (const bucket of buckets) {
      if (bucket.value > below) out.push({ ...bucket, value: bucket.value - below });
      below = Math.max(below, bucket.value);
    }
  }
  return out;
}

/** Hits grouped by series (family and labels, whatever their order), each group non-empty. */
function groupBySeries(hits: readonly BucketHits[]): BucketHits[][] {
  const series = new Map<string, BucketHits[]>();
  for (const hit of hits) {
    const key = `${hit.family}\u0000${JSON.stringify(Object.entries(hit.labels).sort())}`;
    series.set(key, [...(series.get(key) ?? []), hit]);
  }
  return [...series.values()];
}

/** A histogram's upper bounds in increasing order, `+Inf` last (empty for any other metric). */
function boundsOf(family: string): number[] {
  const info = (EDGE_METRICS as Record<string, MetricInfo>)[family];
  return info?.type === "histogram" ? [...(info.buckets ?? []), Number.POSITIVE_INFINITY] : [];
}

function parseBound(le: string): number {
  return le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le);
}
