/** The edge's histograms: one bucket hit per observation, read back as Prometheus's cumulative buckets. */
import { describe, expect, it } from "vitest";
import { EDGE_METRICS } from "../../../edge/metrics/catalog.ts";
import { type BucketHits, cumulativeBuckets, hitsOfCumulative, observation } from "../../../edge/metrics/histogram.ts";
import { renderPrometheus } from "../../../edge/metrics/prometheus.ts";

const NAME = "frontier:edge_turn_duration_seconds";
const BOUNDS = [...EDGE_METRICS[NAME].buckets.map(String), "+Inf"];

/** What the EdgeMetricsDO stores for a list of observations (its upsert, summed by bucket). */
function store(values: number[]): BucketHits[] {
  const hits = new Map<string, BucketHits>();
  for (const v of values) {
    for (const inc of observation(NAME, { protocol: "anthropic" }, v)) {
      if (!inc.name.endsWith("_bucket")) continue;
      const { le = "", ...labels } = inc.labels;
      const hit = hits.get(le) ?? { family: NAME, labels, le, value: 0 };
      hit.value += inc.value;
      hits.set(le, hit);
    }
  }
  return [...hits.values()];
}

describe("edge histograms", () => {
  it("write one bucket, the sum and the count per observation", () => {
    const incs = observation(NAME, { protocol: "anthropic" }, 0.2);
    expect(incs).toEqual([
      { name: `${NAME}_bucket`, labels: { protocol: "anthropic", le: "0.25" }, value: 1 },
      { name: `${NAME}_sum`, labels: { protocol: "anthropic" }, value: 0.2 },
      { name: `${NAME}_count`, labels: { protocol: "anthropic" }, value: 1 },
    ]);
    expect(observation(NAME, {}, 0.25)[0]?.labels.le).toBe("0.25"); // le is inclusive
    expect(observation(NAME, {}, 9000)[0]?.labels.le).toBe("+Inf");
  });

  it("read back cumulative: every bound in increasing order, +Inf equal to the count", () => {
    const values = [0.003, 0.2, 0.2, 1.5, 42, 9000];
    const buckets = cumulativeBuckets(store(values));
    expect(buckets.map((b) => b.labels.le)).toEqual(BOUNDS);
    const at = (le: string) => buckets.find((b) => b.labels.le === le)?.value;
    expect(at("0.005")).toBe(1);
    expect(at("0.1")).toBe(1);
    expect(at("0.25")).toBe(3);
    expect(at("2.5")).toBe(4);
    expect(at("60")).toBe(5);
    expect(at("+Inf")).toBe(values.length);
    for (const [i, b] of buckets.entries()) expect(b.value).toBeGreaterThanOrEqual(buckets[i - 1]?.value ?? 0);
    expect(buckets.every((b) => b.labels.protocol === "anthropic" && b.name === `${NAME}_bucket`)).toBe(true);
  });

  it("keep series with different labels apart", () => {
    const a = store([0.2]);
    const b = store([5, 5]).map((h) => ({ ...h, labels: { protocol: "openai" } }));
    const buckets = cumulativeBuckets([...a, ...b]);
    const inf = (protocol: string) =>
      buckets.find((x) => x.labels.protocol === protocol && x.labels.le === "+Inf")?.value;
    expect(inf("anthropic")).toBe(1);
    expect(inf("openai")).toBe(2);
  });

  it("turn an older edge's cumulative rows into the same hits, in whatever order they were stored", () => {
    const values = [0.003, 0.2, 0.2, 1.5, 42, 9000];
    const cumulative = cumulativeBuckets(store(values)).reverse();
    const hits = hitsOfCumulative(cumulative);
    expect(cumulativeBuckets(hits)).toEqual(cumulativeBuckets(store(values)));
    expect(hits.reduce((sum, h) => sum + h.value, 0)).toBe(values.length);
    expect(hitsOfCumulative([{ name: "frontier:edge_turns_total", labels: {}, value: 3 }])).toEqual([]);
  });

  it("render one series at a time: its buckets in increasing le, then _sum and _count", () => {
    const openai = store([5]).map((h) => ({ ...h, labels: { protocol: "openai" } }));
    const sums = [
      ...observation(NAME, { protocol: "openai" }, 5).slice(1),
      ...observation(NAME, { protocol: "anthropic" }, 0.2).slice(1),
    ];
    const text = renderPrometheus([...sums, ...cumulativeBuckets([...store([0.2]), ...openai])]);
    const lines = text.split("\n").filter((l) => l.startsWith(NAME));
    const names = lines.map((l) => l.slice(NAME.length).split(/[{ ]/)[0]);
    const perSeries = ["_bucket", ...BOUNDS.slice(1).map(() => "_bucket"), "_sum", "_count"];
    expect(names).toEqual([...perSeries, ...perSeries]);
    expect(lines[0]).toContain('protocol="anthropic"');
    expect(lines[0]).toContain('le="0.005"');
    expect(lines.at(-1)).toBe(`${NAME}_count{protocol="openai"} 1`);
  });
});
