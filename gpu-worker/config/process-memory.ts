/**
 * The process settings that keep a worker's resident memory flat across waves of conversations (issue
 * 42; measured in docs/operations/worker-memory.md). glibc and V8 read them once, when the process
 * starts, so the worker cannot set them for itself: every launcher passes them (the local stack,
 * scripts/stack/worker-process.ts; the files in deploy/), and the worker's ready line names any that
 * are missing. An operator's own value for one of them wins.
 */

/** Environment variables (name → value) a worker process is started with. */
export const WORKER_MEMORY_ENV = {
  /**
   * glibc: at most 2 malloc arenas. By default every thread that allocates under contention gets an
   * arena of its own (up to 8 per core), and each keeps the memory freed into it.
   */
  MALLOC_ARENA_MAX: "2",
  /**
   * glibc: allocations of 128 KiB and more get mappings of their own, returned to the system when
   * freed. Left dynamic, the threshold rises (up to 32 MiB) after the first such free, and from then
   * on freed KV-state and message buffers stay in the heap.
   */
  MALLOC_MMAP_THRESHOLD_: "131072",
} as const;

/**
 * V8: young-generation semi-spaces of at most 16 MiB (Node's size for years). Node 24 sizes them from
 * the heap limit, and on a host with plenty of memory the new space grew to 128 MiB under load.
 */
export const WORKER_V8_FLAG = "--max-semi-space-size=16";

/** `env` with the memory settings added where it does not set them (NODE_OPTIONS: appended). */
export function withWorkerMemorySettings(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  for (const [name, value] of Object.entries(WORKER_MEMORY_ENV)) out[name] ??= value;
  const nodeOptions = out.NODE_OPTIONS ?? "";
  if (!nodeOptions.includes("--max-semi-space-size"))
    out.NODE_OPTIONS = nodeOptions === "" ? WORKER_V8_FLAG : `${nodeOptions} ${WORKER_V8_FLAG}`;
  return out;
}

/** The memory settings this process was started without (for the ready line; empty: all set). */
export function missingWorkerMemorySettings(
  env: Readonly<Record<string, string | undefined>>,
  execArgv: readonly string[],
): string[] {
  const missing: string[] = Object.keys(WORKER_MEMORY_ENV).filter((name) => !env[name]);
  const flags = [...execArgv, env.NODE_OPTIONS ?? ""].join(" ");
  if (!flags.includes("--max-semi-space-size")) missing.push(WORKER_V8_FLAG);
  return missing;
}
