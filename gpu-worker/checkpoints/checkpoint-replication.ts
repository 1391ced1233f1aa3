/**
 * The local store's side of a replica: upload after a write, import remote metadata as index rows
 * without files, download files on first load (one download per id at a time), delete remote copies.
 */
import { log } from "../log.ts";
import type { CheckpointFiles } from "./checkpoint-files.ts";
import type { CheckpointIndex } from "./checkpoint-index.ts";
import type { CheckpointPins } from "./checkpoint-pins.ts";
import type { CheckpointReplica } from "./checkpoint-replica.ts";
import type { CheckpointMeta } from "./types.ts";

export class CheckpointReplication {
  readonly #downloads = new Map<string, Promise<void>>();

  constructor(
    private readonly replica: CheckpointReplica,
    private readonly index: CheckpointIndex,
    private readonly files: CheckpointFiles,
    private readonly pins: CheckpointPins,
    private readonly modelIdentity: string,
  ) {}

  /** Upload a committed checkpoint; a failure is logged (the checkpoint stays usable on this host). */
  async upload(meta: CheckpointMeta, checksum: string): Promise<void> {
    const files = { state: this.files.statePath(meta.id), payload: this.files.payloadPath(meta.id) };
    await this.replica
      .upload({ meta, checksum }, files)
      .catch((error: unknown) => log("checkpoint upload failed", { id: meta.id.slice(0, 8), error: String(error) }));
  }

  /** Delete the remote copy in the background. */
  deleteRemote(meta: Pick<CheckpointMeta, "id" | "tenant" | "sessionId">): void {
    this.replica
      .delete(meta)
      .catch((error: unknown) =>
        log("checkpoint remote delete failed", { id: meta.id.slice(0, 8), error: String(error) }),
      );
  }

  /**
   * Import the replica's metadata of `tenant`'s shared-prefix checkpoints and (with `sessionId`) that
   * session's, as rows without files (this model and tenant only); drop replica-only rows of those
   * scopes that are gone remotely. Returns how many rows were imported.
   */
  async refresh(tenant: string, sessionId: string | undefined): Promise<number> {
    const known = (id: string) => this.index.get(id) !== undefined;
    const listed = await this.replica.list(tenant, sessionId, known);
    let imported = 0;
    for (const { meta, checksum } of listed.checkpoints) {
      if (meta.tenant !== tenant || meta.modelIdentity !== this.modelIdentity) continue;
      if (this.index.insertRemote(meta, checksum)) imported++;
    }
    if (listed.complete) {
      for (const id of this.index.remoteIdsIn(tenant, sessionId ?? "")) {
        if (!listed.listedIds.has(id) && !this.pins.has(id)) this.index.delete(id);
      }
    }
    return imported;
  }

  /** Fetch a replica-only checkpoint's files into place and mark the row local; the caller verifies them. */
  download(meta: CheckpointMeta, downloaded: () => void): Promise<void> {
    let pending = this.#downloads.get(meta.id);
    if (!pending) {
      pending = this.files
        .adopt(meta.id, (temps) => this.replica.download(meta, temps))
        .then(() => {
          this.index.setLocal(meta.id, true);
          downloaded();
        })
        .finally(() => this.#downloads.delete(meta.id));
      this.#downloads.set(meta.id, pending);
    }
    return pending;
  }
}
