import type { CheckpointReplica } from "../replica/checkpoint-replica.ts";

/** How to open a `CheckpointStore`. */
export interface CheckpointStoreOptions {
  /** The store's directory: index at `dir/index.sqlite`, files under `dir/files/`. */
  readonly dir: string;
  /** Disk budget; every write evicts down to it. */
  readonly budgetBytes: number;
  /** What one tenant keeps when the store is over budget (checkpoint-budget.ts; default half the budget). */
  readonly tenantShareBytes?: number;
  /** Identity of the loaded model and KV layout; checkpoints of any other identity are never returned. */
  readonly modelIdentity: string;
  /** Clock in epoch milliseconds (tests inject one). */
  readonly now?: () => number;
  /** Most distinct text lengths `findLongestPrefix` tries (default 64). */
  readonly maxPrefixCandidates?: number;
  /**
   * Other worker processes use the same directory: files without an index row are only deleted at
   * open once they are old enough not to be another process's write in progress.
   */
  readonly shared?: boolean;
  /**
   * A remote copy other hosts read (an S3 bucket): writes are uploaded, `refresh` imports remote
   * metadata as rows without files, `load` downloads on first use, eviction keeps the row (files
   * only), and `remove` deletes the remote copy too.
   */
  readonly replica?: CheckpointReplica;
  /** Bytes available on the store's file system (default statfs; tests inject a full disk). */
  readonly availableBytes?: (dir: string) => number;
  /**
   * Where whole KV dumps and assembled states live briefly (default `/dev/shm` where it exists,
   * else the OS temp directory): memory, so only a chunk's bytes reach the store's disk.
   */
  readonly scratchDir?: string;
  /**
   * Bytes of recent plain states kept in a memory-backed scratch directory, so a restore soon after
   * a park skips decrypting (plain-state-cache.ts; default 1 GiB; 0: none).
   */
  readonly plainCacheBytes?: number;
}
