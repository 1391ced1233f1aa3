/**
 * The store's chained checkpoints: a checkpoint that extends a stored one writes only the KV cells
 * past it (a chunk) and hard-links the base's chunks beside its own files; a load opens each sealed
 * chunk (tags checked) and assembles them into one plain state file in scratch memory; remote
 * deletion keeps chunks still linked.
 */
import { rm } from "node:fs/promises";

import type { ChunkedState } from "../state/chunked-state.ts";
import { ChunkChecksumError, UnsupportedStateError } from "../state/kv-state-chunks.ts";
import type { TenantDataKey } from "../state/sealed-file.ts";
import { stateCheck } from "./checkpoint-file-format.ts";
import type { CheckpointFiles, WrittenCheckpoint } from "./checkpoint-files.ts";
import type { CheckpointIndex } from "./checkpoint-index.ts";
import type { CheckpointPins } from "./checkpoint-pins.ts";
import {
  type ChainLink,
  CheckpointKeyError,
  type CheckpointMeta,
  type CheckpointWriteInput,
  CorruptCheckpointError,
} from "./types.ts";

/** Most chunks a checkpoint's state is assembled from; a write past it stores the whole state. */
const MAX_CHAIN = 64;

export class CheckpointChains {
  constructor(
    private readonly index: CheckpointIndex,
    private readonly files: CheckpointFiles,
    private readonly pins: CheckpointPins,
    private readonly chunks: ChunkedState,
    private readonly modelIdentity: string,
  ) {}

  /** Drop the scratch space (the store is closing). */
  close(): void {
    this.chunks.close();
  }

  /**
   * Write the files of new checkpoint `id`: a chunk over `input.extends` when that base is usable
   * (local, same tenant and model, not longer than this one, chain below the limit; pinned while
   * linked) and the state's layout is known, else the whole state. Returns the files and the chain.
   */
  async write(
    id: string,
    input: CheckpointWriteInput,
    writeState: (path: string) => Promise<void>,
  ): Promise<{ written: WrittenCheckpoint; chain: ChainLink[] }> {
    const base =
      input.extends === undefined ? undefined : this.#base(input.extends, input.tenant, input.payload.tokens);
    if (!base) return { written: await this.files.write(id, input.key, input.payload, writeState), chain: [] };
    const { meta, check } = base;
    this.pins.pin(meta.id);
    try {
      const sources = [...meta.chain.map((_, k) => this.files.chainPath(meta.id, k)), this.files.statePath(meta.id)];
      let chunked = false;
      const written = await this.files.write(
        id,
        input.key,
        input.payload,
        async (path) => {
          chunked = await this.chunks.writeChunk(meta.tokenCount, path, writeState);
        },
        // Asked once the state is written: a state the chunker does not know was written whole.
        () => (chunked ? sources : []),
      );
      return { written, chain: chunked ? [...meta.chain, { id: meta.id, crc: check.crc, bytes: check.bytes }] : [] };
    } finally {
      if (this.pins.unpin(meta.id)) this.files.remove(meta.id);
    }
  }

  #base(id: string, tenant: string, tokens: readonly number[]) {
    const row = this.index.get(id);
    if (!row?.local || row.meta.tenant !== tenant || row.meta.modelIdentity !== this.modelIdentity) return undefined;
    if (row.meta.chain.length + 1 >= MAX_CHAIN || row.meta.tokenCount > tokens.length) return undefined;
    const check = stateCheck(row.checksum);
    return check && { meta: row.meta, check };
  }

  /**
   * Open a checkpoint's sealed state (each chunk of a chain under its writer's id) into plain
   * scratch files, assemble a chain into one, and `readState` it; the plain files are removed
   * after. A chunk that is missing, fails its tag or does not parse throws
   * {@link CorruptCheckpointError}; a key that does not open it {@link CheckpointKeyError} (before
   * `readState`); an error of `readState` passes through.
   */
  async load(meta: CheckpointMeta, key: TenantDataKey, readState: (path: string) => Promise<void>): Promise<void> {
    const { id } = meta;
    const sealed = [
      ...meta.chain.map((link, k) => ({ writer: link.id, path: this.files.chainPath(id, k) })),
      { writer: id, path: this.files.statePath(id) },
    ];
    const plain = sealed.map(() => this.files.scratchPath());
    let reading = false;
    try {
      for (const [k, part] of sealed.entries()) await this.files.openState(part.writer, part.path, key, plain[k] ?? "");
      const [only] = plain;
      if (plain.length === 1 && only !== undefined) {
        reading = true;
        await readState(only);
        return;
      }
      await this.chunks.assembled(plain, [], async (path) => {
        reading = true;
        await readState(path);
      });
    } catch (error) {
      if (reading || error instanceof CorruptCheckpointError || error instanceof CheckpointKeyError) throw error;
      const kind =
        error instanceof ChunkChecksumError
          ? "checksum"
          : error instanceof UnsupportedStateError
            ? "payload"
            : (error as NodeJS.ErrnoException).code === "ENOENT"
              ? "missing"
              : undefined;
      if (kind === undefined) throw error;
      throw new CorruptCheckpointError(`checkpoint ${id}: ${String(error)}`, { checkpointId: id, kind });
    } finally {
      await Promise.all(plain.map((path) => rm(path, { force: true })));
    }
  }

  /**
   * What the replica may delete with a checkpoint whose row is gone: its own chunk unless a row this
   * store knows (local or imported) links it, and each chunk it linked once nothing known does.
   */
  remoteDeletion(meta: CheckpointMeta): { keepState: boolean; orphans: string[] } {
    const keepState = this.index.linkedBy(meta.id, meta.id) > 0;
    const orphans = meta.chain
      .map((link) => link.id)
      .filter((chunk) => this.index.get(chunk) === undefined && this.index.linkedBy(chunk, meta.id) === 0);
    return { keepState, orphans };
  }
}
