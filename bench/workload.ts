/**
 * What a benchmark workload is: one file exporting a `Workload`, registered by one line in
 * bench/run.ts. A workload gets the run's options and (when it asks for it) the running stack, and
 * returns summary rows for the ratio table at the top of the report plus its own detailed section.
 */

import type { FamilyName } from "../native/model/families.ts";
import type { TestModelSize } from "../native/model/gguf-writer.ts";
import type { EdgeDirect } from "../scripts/stack.ts";
import type { LoadSettings } from "./workloads/load/load-settings.ts";

export interface BenchOptions {
  /** Tiny model, small prompts, one repetition: proves every workload still runs. */
  quick: boolean;
  /** Repetitions per measurement (medians and spread are over these). */
  reps: number;
  /** Prompt sizes for continuation vs cold. */
  contexts: number[];
  /** Prompt size for checkpoint restore vs re-prefill (sessions workload). */
  restoreTokens: number;
  /** Prompt sizes for the checkpoint-restore workload (every `--restore-tokens` value). */
  restoreSizes: number[];
  /** Approximate tokens of the agent loop's system prompt + tool definitions. */
  agentPrefixTokens: number;
  /** Turns of each agent loop. */
  agentTurns: number;
  /** Path of a llama.cpp `llama-server` binary for the peer comparison (off when absent). */
  llamaServer: string | undefined;
  /** Generated model size used when no FRONTIER_MODEL_PATH is set. */
  size: TestModelSize;
  /** A real-vocabulary family model (`--family`) instead of the byte-level one. */
  family?: FamilyName;
  /** The GGUF every workload serves (generated when missing). */
  modelPath: string;
  /** KV cells per sequence of the stack's worker. */
  contextSize: number;
  /** Sequences of the stack's worker. */
  sequences: number;
  /** `auto` offloads to a GPU when the engine has a GPU build; `off` forces CPU. */
  gpu: "auto" | "off";
  /** The edge the workloads call: `wrangler dev`, or the same edge in workerd without wrangler. */
  edge: "wrangler" | "workerd";
  /** The load workload's settings (`--agents`, `--load`). */
  load: LoadSettings;
  /** `--only` names the load workload, or `--agents`/`--load` were given (it is off in a plain full run). */
  loadRequested: boolean;
}

export interface BenchStack {
  edgeUrl: string;
  /** The worker's h2c gRPC URL (for the direct-call comparison). */
  workerGrpcUrl: string;
  /** The worker's decision log so far (stderr lines); empty when using a stack this run did not start. */
  workerLogs: readonly string[];
  /** The same edge in workerd without wrangler (when this run started the stack). */
  edgeDirect?: EdgeDirect | undefined;
  /** The llama.cpp build the worker loaded, as its Health names it (native/engine-types.ts describeEngineBuild). */
  engineBuild: string;
  /** The worker's process id now (it may have restarted); absent for a stack this run did not start. */
  workerPid?: (() => number | undefined) | undefined;
}

/** One line of the ratio table: a claim, what was measured, and the ratio with its spread. */
export interface SummaryRow {
  workload: string;
  measure: string;
  /** e.g. "212.7x" or "12.1 ms"; medians over the repetitions. */
  value: string;
  /** e.g. "180.2x–230.4x (n=3)". */
  spread: string;
}

export interface WorkloadResult {
  summary: SummaryRow[];
  /** Markdown: a `## …` heading, tables and a line on what exactly was compared. */
  section: string;
  /** Correctness failures (not timings): reported, and the run exits non-zero after writing the report. */
  violations?: string[];
  /** Extra files to write next to the report (name relative to the report's folder → content). */
  files?: Record<string, string>;
  /** Data other workloads may reuse (e.g. the agent loop's transcripts for the peer comparison). */
  shared?: Record<string, unknown>;
}

export interface WorkloadContext {
  options: BenchOptions;
  /** Present for workloads with `needsStack`. */
  stack: BenchStack | undefined;
  /** `shared` values of the workloads that ran before this one, by workload name. */
  earlier: ReadonlyMap<string, Record<string, unknown>>;
  progress(message: string): void;
}

export interface Workload {
  /** Short name, used by `--only` and in the ratio table. */
  name: string;
  /** Needs the edge + worker stack (started once and shared by every workload that needs it). */
  needsStack: boolean;
  /** Whether this run should include it (e.g. the peer comparison only with --llama-server). */
  enabled?(options: BenchOptions): boolean;
  run(context: WorkloadContext): Promise<WorkloadResult>;
}
