/**
 * The local store's side of a replica: upload after a write, import remote metadata as index rows
 * without files, download files on first load (one download per id at a time), delete remote copies.
 */
import { link } from "node:fs/promises";
import { log } from "../../log.ts";
import type { CheckpointFiles } from "../store/checkpoint-files.ts";
import type { CheckpointIndex } from "../store/checkpoint-index.ts";
import type { CheckpointPins } from "../store/checkpoint-pins.ts";
import type { CheckpointMeta } from "../store/types.ts";
import type { CheckpointReplica } from "./checkpoint-replica.ts";

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

  /** Delete the remote copy in the background (see `CheckpointReplica.delete`). */
  deleteRemote(
    meta: Pick<CheckpointMeta, "id" | "tenant" | "sessionId">,
    keepState: boolean,
    orphans: readonly string[],
  ): void {
    this.replica
      .delete(meta, keepState, orphans)
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

  /**
   * Fetch a replica-only checkpoint's files into place and mark the row local; the caller verifies
   * them. A chunk of its chain already on this disk (its writer is a local row) is hard-linked, not
   * downloaded again.
   */
  download(meta: CheckpointMeta, downloaded: () => void): Promise<void> {
    let pending = this.#downloads.get(meta.id);
    if (!pending) {
      pending = this.files
        .adopt(meta.id, meta.chain.length, async (temps) => {
          await this.replica.download(meta, temps);
          for (const [k, chunk] of meta.chain.entries()) {
            const path = temps.chain[k] ?? "";
            if (!(await this.#linkLocal(chunk.id, path))) await this.replica.downloadChunk(meta.tenant, chunk.id, path);
          }
        })
        .then(() => {
          this.index.setLocal(meta.id, true);
          downloaded();
        })
        .finally(() => this.#downloads.delete(meta.id));
      this.#downloads.set(meta.id, pending);
    }
    return pending;
  }

  /** Hard-link the state chunk of local checkpoint `id` (pinned meanwhile) to `path`; false when not local. */
  async #linkLocal(id: string, path: string): Promise<boolean> {
    if (!this.index.get(id)?.local) return false;
    this.pins.pin(id);
    try {
      await link(this.files.statePath(id), path);
      return true;
    } catch {
      return false;
    } finally {
      if (this.pins.unpin(id)) this.files.remove(id);
    }
  }
}
