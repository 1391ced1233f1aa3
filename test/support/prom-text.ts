/** A small reader of the Prometheus text format for tests: samples by name and labels. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePromText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? "").matchAll(LABEL)) labels[key ?? ""] = JSON.parse(`"${raw}"`) as string;
    samples.push({ name: match[1] ?? "", labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sampleSum(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** `after − before` of one series (summed over matching labels). */
export function delta(
  before: readonly Sample[],
  after: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
) {
  return sampleSum(after, name, labels) - sampleSum(before, name, labels);
}
