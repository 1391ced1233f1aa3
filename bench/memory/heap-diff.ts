/**
 * What grew in a worker's JS heap between two heap snapshots (worker-waves.ts --snapshots DIR): live
 * objects grouped by V8 node type and constructor/name, with their count and shallow size in each
 * snapshot, largest growth first.
 *
 *   npx tsx bench/memory/heap-diff.ts DIR/2.heapsnapshot DIR/9.heapsnapshot [--top 25]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** type:name → [count, self bytes]. */
function groups(path: string): Map<string, [number, number]> {
  const snap = JSON.parse(readFileSync(path, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const out = new Map<string, [number, number]>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt] ?? 0] ?? "?";
    const raw =
      type === "string" || type === "concatenated string" || type === "sliced string"
        ? ""
        : (snap.strings[snap.nodes[i + nameAt] ?? 0] ?? "");
    const key = `${type}:${raw.length > 60 ? `${raw.slice(0, 60)}…` : raw}`;
    const entry = out.get(key) ?? [0, 0];
    entry[0]++;
    entry[1] += snap.nodes[i + sizeAt] ?? 0;
    out.set(key, entry);
  }
  return out;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "25" } },
});
const [beforePath, afterPath] = positionals;
if (!beforePath || !afterPath) throw new Error("usage: heap-diff.ts BEFORE.heapsnapshot AFTER.heapsnapshot");
const before = groups(beforePath);
const after = groups(afterPath);
const rows = [...new Set([...before.keys(), ...after.keys()])].map((key) => {
  const [n0, b0] = before.get(key) ?? [0, 0];
  const [n1, b1] = after.get(key) ?? [0, 0];
  return { key, n0, n1, b0, b1, grew: b1 - b0 };
});
rows.sort((a, b) => b.grew - a.grew);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const total = (m: Map<string, [number, number]>) => [...m.values()].reduce((sum, [, b]) => sum + b, 0);
process.stdout.write(`live heap ${kib(total(before))} → ${kib(total(after))}\n`);
for (const r of rows.slice(0, Number(values.top)))
  process.stdout.write(
    `${kib(r.grew).padStart(10)}  ${String(r.n0).padStart(7)} → ${String(r.n1).padEnd(7)} ${r.key}\n`,
  );
