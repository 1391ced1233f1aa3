/**
 * The llama.cpp libraries a running process has mapped (`/proc/PID/maps`): the evidence that two
 * processes run the same kernels is that they mapped the same files (node-llama-cpp's prebuilt
 * `libggml-cpu-<variant>.so`, picked at run time by ggml's CPU-feature score, is the kernels).
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename } from "node:path";

const LLAMA_LIBRARY = /\/lib(ggml|llama)[^/]*\.so[^/]*$/;

/** Real paths of the ggml/llama shared libraries `pid` mapped, sorted; empty when unreadable. */
export function mappedLlamaLibraries(pid: number | undefined): string[] {
  if (pid === undefined) return [];
  let maps: string;
  try {
    maps = readFileSync(`/proc/${pid}/maps`, "utf8");
  } catch {
    return [];
  }
  const paths = new Set<string>();
  for (const line of maps.split("\n")) {
    const path = line.slice(line.indexOf("/"));
    if (!line.includes("/") || !LLAMA_LIBRARY.test(path)) continue;
    try {
      paths.add(realpathSync(path));
    } catch {
      paths.add(path);
    }
  }
  return [...paths].sort();
}

/** The CPU kernels among them: `libggml-cpu*.so` (a variant of the prebuilt, or a local build's). */
export function kernelLibraries(paths: readonly string[]): string[] {
  return paths.filter((p) => basename(p).startsWith("libggml-cpu"));
}

/** One file, whatever path or hard link names it (`dev:inode`); the path itself when it cannot be read. */
export function fileIdentity(path: string): string {
  try {
    const { dev, ino } = statSync(path);
    return `${dev}:${ino}`;
  } catch {
    return path;
  }
}
