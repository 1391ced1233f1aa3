/**
 * The checkpoint replica in an S3-compatible bucket. Keys (under an optional prefix):
 *   meta/<tenant hash>/shared/<id>.json       metadata of a shared-prefix checkpoint (session "")
 *   meta/<tenant hash>/s-<session hash>/<id>.json  metadata of a session's checkpoint
 *   blob/<tenant hash>/<id>.state             the engine's KV state file
 *   blob/<tenant hash>/<id>.payload           the payload file (text, tokens, extra JSON)
 * Hashes are sha256 (hex, first 32), so tenant and session ids never shape a key; no key or
 * metadata field holds a plain hash of checkpoint text (`textHash` is keyed per tenant). Every lookup lists
 * one tenant's scopes only and checks the tenant inside each metadata object. Metadata is written
 * after both blobs and deleted before them. Retention: objects are deleted when their checkpoint is
 * removed (replaced, forgotten, found corrupt); metadata older than `maxAgeMs` is deleted (with its
 * blobs) by whichever worker lists it.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { log } from "../../log.ts";
import { parseChain } from "../store/checkpoint-index.ts";
import { type ChainLink, type CheckpointMeta, CorruptCheckpointError, isCheckpointReason } from "../store/types.ts";
import type { CheckpointFilePaths, CheckpointReplica, ReplicatedCheckpoint } from "./checkpoint-replica.ts";
import { S3Client, type S3Location } from "./s3-client.ts";

export interface S3ReplicaOptions extends S3Location {
  /** Key prefix inside the bucket ("" or ending in "/"). */
  readonly prefix: string;
  /** Metadata older than this is deleted when listed. */
  readonly maxAgeMs: number;
  /** Timeout of a metadata request or a listing page. */
  readonly requestTimeoutMs?: number;
  /** Timeout of a blob upload or download. */
  readonly blobTimeoutMs?: number;
  readonly now?: () => number;
}

const META_FILE = /([0-9a-f]{32})\.json$/;
/**
 * Version of the metadata objects. 2: `textHash` is the keyed hash of `../state/text-hash.ts`.
 * Version 1 objects (a plain SHA-256 of the text) are ignored, never imported into the index; they
 * go with their checkpoint's removal or at `maxAgeMs`.
 */
const META_VERSION = 2;

export class S3CheckpointReplica implements CheckpointReplica {
  readonly description: string;
  readonly #client: S3Client;
  readonly #prefix: string;
  readonly #maxAgeMs: number;
  readonly #requestTimeoutMs: number;
  readonly #blobTimeoutMs: number;
  readonly #now: () => number;

  constructor(options: S3ReplicaOptions) {
    this.#client = new S3Client(options);
    this.#prefix = options.prefix === "" || options.prefix.endsWith("/") ? options.prefix : `${options.prefix}/`;
    this.#maxAgeMs = options.maxAgeMs;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 5_000;
    this.#blobTimeoutMs = options.blobTimeoutMs ?? 300_000;
    this.#now = options.now ?? Date.now;
    this.description = `${options.url.replace(/\/+$/, "")}/${this.#prefix}`;
  }

  async upload({ meta, checksum }: ReplicatedCheckpoint, files: CheckpointFilePaths): Promise<void> {
    const signal = AbortSignal.timeout(this.#blobTimeoutMs);
    const [blobState, blobPayload] = this.#blobKeys(meta.tenant, meta.id);
    await this.#client.put(blobState, await readFile(files.state), signal);
    await this.#client.put(blobPayload, await readFile(files.payload), signal);
    const body = JSON.stringify({ version: META_VERSION, ...meta, hits: 0, checksum });
    await this.#client.put(this.#metaKey(meta), Buffer.from(body, "utf8"), this.#signal());
  }

  async download(meta: CheckpointMeta, files: CheckpointFilePaths): Promise<void> {
    const signal = AbortSignal.timeout(this.#blobTimeoutMs);
    const [blobState, blobPayload] = this.#blobKeys(meta.tenant, meta.id);
    for (const [key, path] of [
      [blobState, files.state],
      [blobPayload, files.payload],
    ] as const) {
      const bytes = await this.#client.get(key, signal);
      if (!bytes) {
        throw new CorruptCheckpointError(`checkpoint ${meta.id}: remote file missing`, {
          checkpointId: meta.id,
          kind: "missing",
        });
      }
      await writeFile(path, bytes);
    }
  }

  async downloadChunk(tenant: string, chunkId: string, path: string): Promise<void> {
    const [blobState] = this.#blobKeys(tenant, chunkId);
    const bytes = await this.#client.get(blobState, AbortSignal.timeout(this.#blobTimeoutMs));
    if (!bytes) {
      throw new CorruptCheckpointError(`state chunk ${chunkId}: remote file missing`, {
        checkpointId: chunkId,
        kind: "missing",
      });
    }
    await writeFile(path, bytes);
  }

  async delete(
    meta: Pick<CheckpointMeta, "id" | "tenant" | "sessionId">,
    keepState: boolean,
    orphans: readonly string[],
  ): Promise<void> {
    const [blobState, blobPayload] = this.#blobKeys(meta.tenant, meta.id);
    await this.#deleteKeys([this.#metaKey(meta), blobPayload, ...(keepState ? [] : [blobState])]);
    await this.#deleteKeys(orphans.map((id) => this.#blobKeys(meta.tenant, id)[0]));
  }

  async list(
    tenant: string,
    sessionId: string | undefined,
    known: (id: string) => boolean,
  ): Promise<{ checkpoints: ReplicatedCheckpoint[]; listedIds: Set<string>; complete: boolean }> {
    const scopes = [this.#scopePrefix(tenant, "")];
    if (sessionId) scopes.push(this.#scopePrefix(tenant, sessionId));
    const listedIds = new Set<string>();
    const wanted: string[] = [];
    let complete = true;
    const cutoff = this.#now() - this.#maxAgeMs;
    for (const scope of scopes) {
      const listing = await this.#client.list(scope, 10, this.#signal());
      complete &&= listing.complete;
      for (const object of listing.objects) {
        const id = META_FILE.exec(object.key)?.[1];
        if (id === undefined) continue;
        if (object.lastModified > 0 && object.lastModified < cutoff) {
          this.#deleteKeys([object.key, ...this.#blobKeys(tenant, id)]).catch((error: unknown) =>
            log("checkpoint replica: expiry failed", { id: id.slice(0, 8), error: String(error) }),
          );
          continue;
        }
        listedIds.add(id);
        if (!known(id)) wanted.push(object.key);
      }
    }
    const checkpoints: ReplicatedCheckpoint[] = [];
    for (let i = 0; i < wanted.length; i += 8) {
      const batch = await Promise.all(wanted.slice(i, i + 8).map((key) => this.#client.get(key, this.#signal())));
      for (const bytes of batch) {
        const parsed = bytes && parseMeta(bytes);
        if (parsed && parsed.meta.tenant === tenant) checkpoints.push(parsed);
      }
    }
    return { checkpoints, listedIds, complete };
  }

  async #deleteKeys(keys: readonly string[]): Promise<void> {
    for (const key of keys) await this.#client.delete(key, this.#signal());
  }

  #signal(): AbortSignal {
    return AbortSignal.timeout(this.#requestTimeoutMs);
  }

  #scopePrefix(tenant: string, sessionId: string): string {
    const scope = sessionId === "" ? "shared" : `s-${shortHash(sessionId)}`;
    return `${this.#prefix}meta/${shortHash(tenant)}/${scope}/`;
  }

  #metaKey(meta: Pick<CheckpointMeta, "id" | "tenant" | "sessionId">): string {
    return `${this.#scopePrefix(meta.tenant, meta.sessionId)}${meta.id}.json`;
  }

  #blobKeys(tenant: string, id: string): [string, string] {
    const base = `${this.#prefix}blob/${shortHash(tenant)}/${id}`;
    return [`${base}.state`, `${base}.payload`];
  }
}

function shortHash(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex").slice(0, 32);
}

/** Validate one metadata object; undefined when it is not a well-formed checkpoint description. */
export function parseMeta(raw: Buffer): ReplicatedCheckpoint | undefined {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || value.version !== META_VERSION) return undefined;
  const str = (k: string) => (typeof value[k] === "string" ? (value[k] as string) : undefined);
  const int = (k: string) =>
    Number.isSafeInteger(value[k]) && (value[k] as number) >= 0 ? (value[k] as number) : undefined;
  const [id, tenant, sessionId, reason, textHash, modelIdentity, checksum] = [
    "id",
    "tenant",
    "sessionId",
    "reason",
    "textHash",
    "modelIdentity",
    "checksum",
  ].map(str);
  const [textLength, tokenCount, bytes, createdAt] = ["textLength", "tokenCount", "bytes", "createdAt"].map(int);
  const toolUseIds = value.toolUseIds;
  let chain: ChainLink[];
  try {
    chain = parseChain(value.chain ?? []);
  } catch {
    return undefined;
  }
  if (
    id === undefined ||
    !/^[0-9a-f]{32}$/.test(id) ||
    !tenant ||
    sessionId === undefined ||
    reason === undefined ||
    !isCheckpointReason(reason) ||
    textHash === undefined ||
    !modelIdentity ||
    checksum === undefined ||
    textLength === undefined ||
    tokenCount === undefined ||
    bytes === undefined ||
    createdAt === undefined ||
    !Array.isArray(toolUseIds) ||
    !toolUseIds.every((t) => typeof t === "string")
  ) {
    return undefined;
  }
  const meta: CheckpointMeta = {
    id,
    tenant,
    sessionId,
    reason,
    textHash,
    textLength,
    tokenCount,
    toolUseIds: toolUseIds as string[],
    bytes,
    chain,
    modelIdentity,
    createdAt,
    lastUsedAt: createdAt,
    hits: 0,
  };
  return { meta, checksum };
}
