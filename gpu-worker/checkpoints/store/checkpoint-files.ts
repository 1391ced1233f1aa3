import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { link, mkdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import {
  checkSealedKey,
  openBuffer,
  openFile,
  sealBuffer,
  sealFile,
  type TenantDataKey,
} from "../state/sealed-file.ts";
import { decodePayload, encodePayload, formatChecksum, parseChecksum } from "./checkpoint-file-format.ts";
import { fsyncDirectory, fsyncFile, missingOr, sealError, writeFileSynced } from "./checkpoint-file-io.ts";
import type { PlainStateCache } from "./plain-state-cache.ts";
import { CheckpointKeyError, type CheckpointPayload, CorruptCheckpointError } from "./types.ts";

const STATE_SUFFIX = ".state";
const PAYLOAD_SUFFIX = ".json";
const TEMP_SUFFIX = ".tmp";
const FILE_NAME = /^([0-9a-f]{32})\.(state|json)$/;
const CHAIN_DIR = /^([0-9a-f]{32})\.chain$/;
const CHAIN_SUFFIX = ".chain";

/** What an atomic write left on disk. */
export interface WrittenCheckpoint {
  /** State file plus payload file size. */
  readonly bytes: number;
  /** State file size. */
  readonly stateBytes: number;
  /** CRC-32 and size of each file, see {@link CheckpointFiles.write}. */
  readonly checksum: string;
}

/**
 * The two files of each checkpoint, named by id only: `<id>.state` (the engine's KV state) and
 * `<id>.json` (the payload), both sealed under the tenant's data key (`../state/sealed-file.ts`:
 * AES-256-GCM, a per-file key wrapped by the tenant's, the checkpoint id and role bound in), so the
 * disk and the replica hold ciphertext only. The engine dumps and loads plain states in scratch
 * memory (`scratchPath`); sealed writes go to `*.tmp`, are fsynced, then renamed into place.
 *
 * Integrity is the GCM tags: a state opens only whole, under its key, as its own checkpoint's, and
 * a load uses the plain state only after every segment passed. A CRC-32 and size of each sealed
 * file (taken while writing it) stay in the index and chain links: a cheap check of the payload
 * before its key is used, and of a chunk's identity in a chain.
 */
export class CheckpointFiles {
  readonly #dir: string;
  readonly #scratchPath: () => string;
  readonly #plainCache: PlainStateCache | undefined;

  /**
   * Use (and create) `dir` for checkpoint files; plain states live at `scratchPath()` (memory)
   * briefly, or, with a `plainCache`, stay there for restores (plain-state-cache.ts).
   */
  constructor(dir: string, scratchPath: () => string, plainCache?: PlainStateCache) {
    this.#dir = dir;
    this.#scratchPath = scratchPath;
    this.#plainCache = plainCache;
    mkdirSync(dir, { recursive: true });
  }

  /** Where the KV state file of checkpoint `id` lives. */
  statePath(id: string): string {
    return join(this.#dir, `${id}${STATE_SUFFIX}`);
  }

  /** Where checkpoint `id` keeps its hard link to earlier state chunk `k` of its chain. */
  chainPath(id: string, k: number): string {
    return join(this.#dir, `${id}${CHAIN_SUFFIX}`, `${k}${STATE_SUFFIX}`);
  }

  /** Where the payload file of checkpoint `id` lives. */
  payloadPath(id: string): string {
    return join(this.#dir, `${id}${PAYLOAD_SUFFIX}`);
  }

  /**
   * Write both files of a fresh `id`: `writeState` fills a plain scratch file, which is sealed into
   * the temp state file; the payload is sealed too; both are fsynced, the checksum
   * `crc32:<state crc>:<state bytes>:<payload crc>:<payload bytes>` (of the sealed bytes) recorded,
   * both renamed into place and the directory fsynced. With `chain` (paths of earlier state chunks,
   * asked for once the state is written), hard links to them go into `<id>.chain/` first. On any
   * failure nothing of `id` is left behind.
   */
  async write(
    id: string,
    key: TenantDataKey,
    payload: CheckpointPayload,
    writeState: (tempPath: string) => Promise<void>,
    chain: () => readonly string[] = () => [],
  ): Promise<WrittenCheckpoint> {
    const stateTemp = `${this.statePath(id)}${TEMP_SUFFIX}`;
    const payloadTemp = `${this.payloadPath(id)}${TEMP_SUFFIX}`;
    const chainDir = join(this.#dir, `${id}${CHAIN_SUFFIX}`);
    const plain = this.#scratchPath();
    try {
      await writeState(plain);
      const state = await sealFile(key, { checkpointId: id, role: "state" }, plain, stateTemp);
      if (!(await this.#plainCache?.keep(id, plain))) await rm(plain, { force: true });
      await fsyncFile(stateTemp);
      const sources = chain();
      if (sources.length > 0) {
        await mkdir(`${chainDir}${TEMP_SUFFIX}`);
        for (const [k, source] of sources.entries()) {
          await link(source, join(`${chainDir}${TEMP_SUFFIX}`, `${k}${STATE_SUFFIX}`));
        }
        await rename(`${chainDir}${TEMP_SUFFIX}`, chainDir);
      }
      const payloadBytes = sealBuffer(key, { checkpointId: id, role: "payload" }, encodePayload(payload));
      await writeFileSynced(payloadTemp, payloadBytes);
      const checksum = formatChecksum(state, { crc: crc32(payloadBytes), bytes: payloadBytes.length });
      await rename(stateTemp, this.statePath(id));
      await rename(payloadTemp, this.payloadPath(id));
      await fsyncDirectory(this.#dir);
      return { bytes: state.bytes + payloadBytes.length, stateBytes: state.bytes, checksum };
    } catch (error) {
      this.#plainCache?.drop(id);
      await Promise.all(
        [
          plain,
          stateTemp,
          payloadTemp,
          this.statePath(id),
          this.payloadPath(id),
          chainDir,
          `${chainDir}${TEMP_SUFFIX}`,
        ].map((p) => rm(p, { force: true, recursive: true })),
      );
      throw error;
    }
  }

  /**
   * Put both files of `id` in place from elsewhere (a replica): `fill` writes the two temp paths, then
   * both are renamed into place. Unverified: the caller checks the checksum ({@link readPayload}, {@link verifyState}).
   */
  async adopt(
    id: string,
    chainLength: number,
    fill: (temps: { state: string; payload: string; chain: string[] }) => Promise<void>,
  ): Promise<void> {
    const chainDir = join(this.#dir, `${id}${CHAIN_SUFFIX}`);
    const chain = Array.from({ length: chainLength }, (_, k) =>
      join(`${chainDir}${TEMP_SUFFIX}`, `${k}${STATE_SUFFIX}`),
    );
    const temps = {
      state: `${this.statePath(id)}${TEMP_SUFFIX}`,
      payload: `${this.payloadPath(id)}${TEMP_SUFFIX}`,
      chain,
    };
    try {
      if (chainLength > 0) await mkdir(`${chainDir}${TEMP_SUFFIX}`, { recursive: true });
      await fill(temps);
      if (chainLength > 0) await rename(`${chainDir}${TEMP_SUFFIX}`, chainDir);
      await rename(temps.state, this.statePath(id));
      await rename(temps.payload, this.payloadPath(id));
    } catch (error) {
      this.remove(id);
      throw error;
    }
  }

  /**
   * Read and open the payload of `id`, checked against its part of `checksum`. Throws
   * {@link CorruptCheckpointError} when a file is missing, the checksum differs, a tag fails or the
   * payload does not parse (the caller removes the entry), {@link CheckpointKeyError} when `key`
   * does not open it (the entry stays).
   */
  async readPayload(id: string, checksum: string, key: TenantDataKey): Promise<CheckpointPayload> {
    const expected = parseChecksum(checksum);
    let payloadBytes: Buffer;
    try {
      payloadBytes = await readFile(this.payloadPath(id));
    } catch (error) {
      throw missingOr(error, id);
    }
    if (!expected || payloadBytes.length !== expected.payload.bytes || crc32(payloadBytes) !== expected.payload.crc) {
      throw new CorruptCheckpointError(`checkpoint ${id}: payload checksum mismatch`, {
        checkpointId: id,
        kind: "checksum",
      });
    }
    let plain: Buffer;
    try {
      plain = openBuffer(key, { checkpointId: id, role: "payload" }, payloadBytes);
    } catch (error) {
      throw sealError(error, id);
    }
    const payload = decodePayload(plain);
    if (!payload)
      throw new CorruptCheckpointError(`checkpoint ${id}: unreadable payload`, { checkpointId: id, kind: "payload" });
    return payload;
  }

  /**
   * Open the sealed state file at `sealedPath` (checkpoint `writerId`'s state or chunk) into the
   * plain file `plainPath`, every tag checked before it resolves: from the plain-state cache when it
   * holds `writerId` (after the key opened the sealed header), else decrypted, then kept in the cache.
   * Errors as {@link readPayload}.
   */
  async openState(writerId: string, sealedPath: string, key: TenantDataKey, plainPath: string): Promise<void> {
    const context = { checkpointId: writerId, role: "state" } as const;
    try {
      // A plain copy in memory skips the decryption, once the key is shown to open the sealed file.
      if (this.#plainCache?.has(writerId)) {
        await checkSealedKey(key, context, sealedPath);
        if (await this.#plainCache.linkTo(writerId, plainPath)) return;
      }
      await openFile(key, context, sealedPath, plainPath);
      // Kept (a second name, in memory) for the next restore of this state: the caller's removal of
      // `plainPath` then frees nothing on the restore path, and the next load skips the decryption.
      await this.#plainCache?.keep(writerId, plainPath, { link: true });
    } catch (error) {
      throw sealError(missingOr(error, writerId), writerId);
    }
  }

  /** A scratch path for a plain state (memory); the caller removes it. */
  scratchPath(): string {
    return this.#scratchPath();
  }

  /** Delete the files of `id`, its chain links and any temp leftovers; missing files are fine. */
  remove(id: string): void {
    this.#plainCache?.drop(id);
    const chainDir = join(this.#dir, `${id}${CHAIN_SUFFIX}`);
    for (const path of [this.statePath(id), this.payloadPath(id), chainDir]) {
      rmSync(path, { force: true, recursive: true });
      rmSync(`${path}${TEMP_SUFFIX}`, { force: true, recursive: true });
    }
  }

  /**
   * The one directory scan, at open: delete temp leftovers and files whose id is not in `known`.
   * Returns the known ids whose two files are both present. When several workers share the
   * directory, another one may be writing right now: files younger than `graceMs` are left alone.
   */
  reconcile(known: ReadonlySet<string>, graceMs = 0): Set<string> {
    const seen = new Map<string, number>();
    const cutoff = Date.now() - graceMs;
    for (const entry of readdirSync(this.#dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        // A known checkpoint's chain links stay; leftovers (temp, unknown id) go like files.
        const id = CHAIN_DIR.exec(entry.name)?.[1];
        const path = join(this.#dir, entry.name);
        const old = graceMs === 0 || (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < cutoff;
        if ((id === undefined || !known.has(id)) && old) rmSync(path, { recursive: true, force: true });
        continue;
      }
      if (!entry.isFile()) continue;
      const match = FILE_NAME.exec(entry.name);
      const id = match?.[1];
      if (id === undefined || !known.has(id)) {
        const path = join(this.#dir, entry.name);
        if (graceMs === 0 || (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < cutoff) {
          rmSync(path, { force: true });
        }
        continue;
      }
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    return new Set([...seen].filter(([, files]) => files === 2).map(([id]) => id));
  }
}
