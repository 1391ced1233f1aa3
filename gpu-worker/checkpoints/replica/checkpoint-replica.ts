/**
 * A remote copy of a checkpoint store (an S3-compatible bucket) that workers on other hosts read.
 * The local `CheckpointStore` stays the cache: it uploads each checkpoint after committing it,
 * imports remote metadata as index rows without files, and downloads the files on first load.
 */
import type { CheckpointMeta } from "../store/types.ts";

/** A checkpoint as the replica stores its metadata: the index row's fields plus the checksum. */
export interface ReplicatedCheckpoint {
  readonly meta: CheckpointMeta;
  readonly checksum: string;
}

/** The two local files of a checkpoint. */
export interface CheckpointFilePaths {
  readonly state: string;
  readonly payload: string;
}

export interface CheckpointReplica {
  /** Where it is, for logs (never credentials). */
  readonly description: string;
  /**
   * Upload both files, then the metadata (the commit point: metadata exists only over complete files).
   * The state file is the checkpoint's own chunk; the chunks of its chain were uploaded by their writers.
   */
  upload(checkpoint: ReplicatedCheckpoint, files: CheckpointFilePaths): Promise<void>;
  /**
   * Download both files to these paths. Throws `CorruptCheckpointError` ("missing") when the
   * remote checkpoint is gone; the caller verifies the checksum.
   */
  download(meta: CheckpointMeta, files: CheckpointFilePaths): Promise<void>;
  /**
   * Download the state chunk written by checkpoint `chunkId` of `tenant` (a link of another
   * checkpoint's chain) to `path`. Throws `CorruptCheckpointError` ("missing") when it is gone.
   */
  downloadChunk(tenant: string, chunkId: string, path: string): Promise<void>;
  /**
   * Delete the metadata, then the payload and (unless `keepState`: another checkpoint's chain links
   * it) the state chunk, then the chunks `orphans` (ids of writers already gone); missing objects are fine.
   */
  delete(
    meta: Pick<CheckpointMeta, "id" | "tenant" | "sessionId">,
    keepState: boolean,
    orphans: readonly string[],
  ): Promise<void>;
  /**
   * The tenant's shared-prefix checkpoints and, with `sessionId`, that session's. Metadata of ids
   * for which `known(id)` is true is not fetched (and not returned). Entries past the retention age
   * are deleted instead of returned. `listedIds` is every id present in the scopes; `complete` is
   * false when the listing was cut short.
   */
  list(
    tenant: string,
    sessionId: string | undefined,
    known: (id: string) => boolean,
  ): Promise<{ checkpoints: ReplicatedCheckpoint[]; listedIds: Set<string>; complete: boolean }>;
}
