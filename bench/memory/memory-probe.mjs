/**
 * Preloaded into a worker process by worker-waves.ts (NODE_OPTIONS="--expose-gc --import <this>"), never
 * by the product: on SIGUSR2 it appends one JSON line to $FRONTIER_MEMORY_PROBE_FILE with the process's
 * memory before and after a full garbage collection (process.memoryUsage, VmRSS split by where the pages
 * live: V8's 256 KiB heap pages, glibc's main heap (brk), other anonymous mappings, file-backed pages),
 * and once more a second later (V8 unmaps freed pages from a background thread), so the driver can tell
 * JS heap, external buffers and native memory apart. With $FRONTIER_MEMORY_PROBE_SNAPSHOTS, also a
 * heap snapshot per reading (after the GC) into that folder.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import v8 from "node:v8";

const file = process.env.FRONTIER_MEMORY_PROBE_FILE;
/** A folder for a heap snapshot after every reading's GC (worker-waves.ts --snapshots). */
const snapshots = process.env.FRONTIER_MEMORY_PROBE_SNAPSHOTS;
let readings = 0;
const PAGE = 256 * 1024;

/** RSS by kind of mapping, from /proc/self/smaps. */
function mappings() {
  const out = { rss: 0, file: 0, v8Pages: 0, brkHeap: 0, otherAnon: 0, otherAnonCount: 0 };
  let kind = "";
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const size = Number.parseInt(head[2] ?? "0", 16) - Number.parseInt(head[1] ?? "0", 16);
      const name = head[3] ?? "";
      kind = name.startsWith("/")
        ? "file"
        : name === "[heap]"
          ? "brkHeap"
          : name === "" && size === PAGE
            ? "v8Pages"
            : "otherAnon";
      if (kind === "otherAnon") out.otherAnonCount++;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      const bytes = Number(rss[1]) * 1024;
      out.rss += bytes;
      out[kind] += bytes;
    }
  }
  return out;
}

function reading() {
  const { heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
  return { heapTotal, heapUsed, external, arrayBuffers, ...mappings(), spaces };
}

if (file) {
  process.on("SIGUSR2", () => {
    const before = reading();
    globalThis.gc?.();
    const afterGc = reading();
    readings++;
    if (snapshots) v8.writeHeapSnapshot(join(snapshots, `${readings}.heapsnapshot`));
    setTimeout(() => {
      const later = reading();
      appendFileSync(file, `${JSON.stringify({ at: Date.now(), before, afterGc, later })}\n`);
    }, 1000);
  });
}
