/** A checkpoint store in a temp dir, with fake engine callbacks that write and check random state bytes. */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { CheckpointStore } from "../../../gpu-worker/checkpoints/store/checkpoint-store.ts";
import type { CheckpointStoreOptions } from "../../../gpu-worker/checkpoints/store/store-options.ts";
import type {
  CheckpointMeta,
  CheckpointPayload,
  CheckpointReason,
} from "../../../gpu-worker/checkpoints/store/types.ts";
import { testDataKey } from "../../support/test-data-key.ts";

export interface WriteSpec {
  tenant?: string;
  sessionId?: string;
  reason?: CheckpointReason;
  toolUseIds?: string[];
  text: string;
  stateBytes?: number;
}

export class StoreFixture {
  readonly dir = mkdtempSync(join(tmpdir(), "frontier-checkpoints-"));
  /** The state bytes each checkpoint was written with, by id. */
  readonly states = new Map<string, Buffer>();
  clock = 1_000;
  store: CheckpointStore;

  constructor(readonly options: Partial<CheckpointStoreOptions> = {}) {
    this.store = this.open();
  }

  open(overrides: Partial<CheckpointStoreOptions> = {}): CheckpointStore {
    this.store = CheckpointStore.open({
      dir: this.dir,
      budgetBytes: 1 << 30,
      modelIdentity: "model-a",
      now: () => this.clock,
      // These tests read what is on disk; plain-state-cache.test.ts covers the copies in memory.
      plainCacheBytes: 0,
      ...this.options,
      ...overrides,
    });
    return this.store;
  }

  reopen(overrides: Partial<CheckpointStoreOptions> = {}): CheckpointStore {
    this.store.close();
    return this.open(overrides);
  }

  async write(spec: WriteSpec): Promise<CheckpointMeta> {
    this.clock += 1;
    const state = randomBytes(spec.stateBytes ?? 256);
    const text = spec.text;
    const meta = await this.store.write(
      {
        tenant: spec.tenant ?? "tenant-a",
        key: testDataKey(spec.tenant ?? "tenant-a"),
        sessionId: spec.sessionId ?? "",
        reason: spec.reason ?? "periodic",
        toolUseIds: spec.toolUseIds ?? [],
        payload: { text, tokens: Array.from(text, (_, i) => i), extra: { text } },
      },
      async (tempPath) => writeFileSync(tempPath, state),
    );
    this.states.set(meta.id, state);
    return meta;
  }

  /** Load with a readState that checks the state file holds exactly the bytes written. */
  async load(meta: CheckpointMeta, during?: () => Promise<void> | void, prefixOf?: string): Promise<CheckpointPayload> {
    this.clock += 1;
    let read = false;
    const payload = await this.store.load(
      meta,
      testDataKey(meta.tenant),
      async (statePath, loaded) => {
        if (during) await during();
        expect(readFileSync(statePath).equals(this.states.get(meta.id)!)).toBe(true);
        expect(loaded.text.length).toBe(meta.textLength);
        read = true;
      },
      prefixOf === undefined ? {} : { prefixOf },
    );
    expect(read).toBe(true);
    return payload;
  }

  statePath(id: string): string {
    return join(this.dir, "files", `${id}.state`);
  }

  payloadPath(id: string): string {
    return join(this.dir, "files", `${id}.json`);
  }

  dispose(): void {
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
