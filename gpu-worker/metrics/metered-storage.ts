/**
 * Decorators that count and time checkpoint I/O without touching the store's code: one around the
 * `CheckpointStorage` the worker uses (writes, loads, prefix lookups) and one around the S3
 * `CheckpointReplica` (every request and its failures). I/O done on behalf of a turn is also added
 * to that turn's trace (see `turn-trace.ts`).
 */
import type {
  CheckpointFilePaths,
  CheckpointReplica,
  ReplicatedCheckpoint,
} from "../checkpoints/replica/checkpoint-replica.ts";
import type { TenantDataKey } from "../checkpoints/state/sealed-file.ts";
import type { EvictionReason } from "../checkpoints/store/budget/checkpoint-tenant-share.ts";
import type { CheckpointStorage } from "../checkpoints/store/checkpoint-storage.ts";
import {
  type CheckpointMeta,
  CheckpointMismatchError,
  type CheckpointPayload,
  type CheckpointStats,
  type CheckpointWriteInput,
  CorruptCheckpointError,
} from "../checkpoints/store/types.ts";
import { currentTrace } from "./turn-trace.ts";
import type { ReadOutcome, ReplicaOperation, WorkerMetrics } from "./worker-metrics.ts";

const seconds = (started: number) => (performance.now() - started) / 1000;

export class MeteredCheckpointStorage implements CheckpointStorage {
  constructor(
    private readonly inner: CheckpointStorage,
    private readonly metrics: WorkerMetrics,
  ) {}

  get modelIdentity(): string {
    return this.inner.modelIdentity;
  }

  async write(input: CheckpointWriteInput, writeState: (tempPath: string) => Promise<void>): Promise<CheckpointMeta> {
    const started = performance.now();
    const trace = currentTrace();
    try {
      const meta = await this.inner.write(input, writeState);
      this.metrics.checkpointWritten(input.reason, meta.bytes, seconds(started));
      return meta;
    } catch (error) {
      this.metrics.checkpointWriteFailed(input.reason);
      throw error;
    } finally {
      trace?.trace.addCheckpointIo(trace.step, "write", performance.now() - started);
    }
  }

  async load(
    meta: CheckpointMeta,
    key: TenantDataKey,
    readState: (statePath: string, payload: CheckpointPayload) => Promise<void>,
    options?: { prefixOf?: string },
  ): Promise<CheckpointPayload> {
    const started = performance.now();
    const trace = currentTrace();
    let outcome: ReadOutcome = "error";
    try {
      const payload = await this.inner.load(meta, key, readState, options);
      outcome = "ok";
      return payload;
    } catch (error) {
      if (error instanceof CorruptCheckpointError) outcome = "corrupt";
      else if (error instanceof CheckpointMismatchError) outcome = "mismatch";
      throw error;
    } finally {
      const sessionRestore = trace?.step === "lease";
      this.metrics.checkpointRead(meta.reason, outcome, meta.bytes, seconds(started), sessionRestore);
      trace?.trace.addCheckpointIo(trace.step, "load", performance.now() - started);
    }
  }

  localPayload(meta: CheckpointMeta, key: TenantDataKey): Promise<CheckpointPayload | undefined> {
    return this.inner.localPayload(meta, key);
  }

  findLongestPrefix(key: TenantDataKey, text: string, options?: { minTokens?: number }): CheckpointMeta | undefined {
    const found = this.inner.findLongestPrefix(key, text, options);
    this.metrics.prefixLookup(found !== undefined);
    return found;
  }

  findByToolUseIds(tenant: string, ids: readonly string[]): CheckpointMeta | undefined {
    return this.inner.findByToolUseIds(tenant, ids);
  }

  findBySession(tenant: string, sessionId: string): CheckpointMeta | undefined {
    return this.inner.findBySession(tenant, sessionId);
  }

  evictedSession(tenant: string, sessionId: string): EvictionReason | undefined {
    return this.inner.evictedSession?.(tenant, sessionId);
  }

  remove(id: string): boolean {
    return this.inner.remove(id);
  }

  has(id: string): boolean {
    return this.inner.has(id);
  }

  refresh(tenant: string, sessionId?: string): Promise<number> {
    return this.inner.refresh(tenant, sessionId);
  }

  stats(): CheckpointStats {
    return this.inner.stats();
  }

  close(): void {
    this.inner.close();
  }
}

export class MeteredReplica implements CheckpointReplica {
  constructor(
    private readonly inner: CheckpointReplica,
    private readonly metrics: WorkerMetrics,
  ) {}

  get description(): string {
    return this.inner.description;
  }

  upload(checkpoint: ReplicatedCheckpoint, files: CheckpointFilePaths): Promise<void> {
    return this.#timed("upload", () => this.inner.upload(checkpoint, files));
  }

  download(meta: CheckpointMeta, files: CheckpointFilePaths): Promise<void> {
    return this.#timed("download", () => this.inner.download(meta, files));
  }

  downloadChunk(tenant: string, chunkId: string, path: string): Promise<void> {
    return this.#timed("download", () => this.inner.downloadChunk(tenant, chunkId, path));
  }

  delete(
    meta: Pick<CheckpointMeta, "id" | "tenant" | "sessionId">,
    keepState: boolean,
    orphans: readonly string[],
  ): Promise<void> {
    return this.#timed("delete", () => this.inner.delete(meta, keepState, orphans));
  }

  list(
    tenant: string,
    sessionId: string | undefined,
    known: (id: string) => boolean,
  ): Promise<{ checkpoints: ReplicatedCheckpoint[]; listedIds: Set<string>; complete: boolean }> {
    return this.#timed("list", () => this.inner.list(tenant, sessionId, known));
  }

  async #timed<T>(operation: ReplicaOperation, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let ok = false;
    try {
      const result = await run();
      ok = true;
      return result;
    } finally {
      this.metrics.replicaOperation(operation, ok, seconds(started));
    }
  }
}
