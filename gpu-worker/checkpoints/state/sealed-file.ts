/**
 * Checkpoint bytes at rest, sealed with AES-256-GCM under a tenant's data key (envelope encryption).
 *
 * Each file gets its own random 256-bit data-encryption key (DEK), wrapped by the tenant's key with
 * the file's context (tenant, checkpoint id, role) and header as additional data. Why a DEK per file
 * rather than the tenant key with a random nonce per segment: the DEK's nonces are a plain segment
 * counter, so no nonce budget is shared across a tenant's millions of segments (random 96-bit
 * nonces under one key are bounded to 2^32 messages); a wrong key fails on the 32-byte wrap, before
 * a byte of the body is read, and is told apart from a damaged body (a wrong key keeps the file, a
 * damaged one is removed); and a key rotation rewraps 76 bytes per file, not the KV.
 *
 *     magic 'FKS1' | u32 segment bytes | u64 plain bytes | 12 wrap nonce | 32 wrapped DEK | 16 wrap tag
 *     segments: ⌈plain / segment⌉ × { ciphertext, 16-byte tag }, nonce = 0^4 ‖ u64be(index)
 *
 * The plain length is in the authenticated header and every segment is tagged under its index, so
 * a truncated, reordered, spliced or bit-flipped file never opens. Files are read and written
 * sequentially in large blocks; nothing here holds a whole state in memory.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";
import { crc32 } from "node:zlib";

/** A tenant's data key as the edge sent it with a request: 32 bytes, used for that tenant only. */
export interface TenantDataKey {
  readonly tenant: string;
  readonly bytes: Uint8Array;
}

/** What a sealed file is, bound into its wrap: a file never opens as another tenant's, checkpoint's or role's. */
export interface SealContext {
  readonly checkpointId: string;
  readonly role: "state" | "payload";
}

/** The key does not open this file: another tenant's or deployment's key, or an altered header. */
export class WrongDataKeyError extends Error {
  override readonly name = "WrongDataKeyError";
}

/** The file opened under its key but its body is damaged: truncated, reordered or altered. */
export class SealedFileDamagedError extends Error {
  override readonly name = "SealedFileDamagedError";
}

export const DATA_KEY_BYTES = 32;
const MAGIC = 0x31534b46; // 'FKS1' little-endian
const HEAD_BYTES = 16;
const HEADER_BYTES = HEAD_BYTES + 12 + DATA_KEY_BYTES + 16;
const TAG_BYTES = 16;
/** Plain bytes per segment: large enough that tags and per-segment setup cost nothing measurable. */
const SEGMENT_BYTES = 1 << 20;
/** Segments per block read or written. */
const BLOCK_SEGMENTS = 8;
/** Bytes handed to each cipher update: small outputs come from the heap, not fresh mappings. */
const UPDATE_BYTES = 1 << 16;

function contextBytes(key: TenantDataKey, context: SealContext): Buffer {
  return Buffer.from(`frontier/checkpoint/v1\u0000${key.tenant}\u0000${context.checkpointId}\u0000${context.role}`);
}

function checkKey(key: TenantDataKey): void {
  if (key.bytes.length !== DATA_KEY_BYTES) throw new WrongDataKeyError("a tenant data key is 32 bytes");
}

function segmentNonce(index: number): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeBigUInt64BE(BigInt(index), 4);
  return nonce;
}

/** A fresh header and its DEK for `plainBytes` bytes. */
function newHeader(key: TenantDataKey, context: SealContext, plainBytes: number): { header: Buffer; dek: Buffer } {
  checkKey(key);
  const head = Buffer.alloc(HEAD_BYTES);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(SEGMENT_BYTES, 4);
  head.writeBigUInt64LE(BigInt(plainBytes), 8);
  const dek = randomBytes(DATA_KEY_BYTES);
  const wrapNonce = randomBytes(12);
  const wrap = createCipheriv("aes-256-gcm", key.bytes, wrapNonce);
  wrap.setAAD(Buffer.concat([contextBytes(key, context), head]));
  const wrapped = Buffer.concat([wrap.update(dek), wrap.final()]);
  return { header: Buffer.concat([head, wrapNonce, wrapped, wrap.getAuthTag()]), dek };
}

/** The DEK and plain length of a header; {@link WrongDataKeyError} when the key does not open it. */
function openHeader(
  key: TenantDataKey,
  context: SealContext,
  header: Buffer,
): { dek: Buffer; plainBytes: number; segmentBytes: number } {
  checkKey(key);
  if (header.length < HEADER_BYTES || header.readUInt32LE(0) !== MAGIC) {
    throw new SealedFileDamagedError("not a sealed checkpoint file");
  }
  const head = header.subarray(0, HEAD_BYTES);
  const segmentBytes = head.readUInt32LE(4);
  const plainBytes = Number(head.readBigUInt64LE(8));
  const unwrap = createDecipheriv("aes-256-gcm", key.bytes, header.subarray(HEAD_BYTES, HEAD_BYTES + 12));
  unwrap.setAAD(Buffer.concat([contextBytes(key, context), head]));
  unwrap.setAuthTag(header.subarray(HEADER_BYTES - TAG_BYTES, HEADER_BYTES));
  let dek: Buffer;
  try {
    dek = Buffer.concat([unwrap.update(header.subarray(HEAD_BYTES + 12, HEADER_BYTES - TAG_BYTES)), unwrap.final()]);
  } catch {
    throw new WrongDataKeyError(`the data key does not open ${context.role} of checkpoint ${context.checkpointId}`);
  }
  if (segmentBytes === 0 || segmentBytes > 64 * SEGMENT_BYTES || !Number.isSafeInteger(plainBytes)) {
    throw new SealedFileDamagedError("implausible sealed file header");
  }
  return { dek, plainBytes, segmentBytes };
}

/** Size of the sealed form of `plainBytes` bytes. */
export function sealedSize(plainBytes: number, segmentBytes = SEGMENT_BYTES): number {
  return HEADER_BYTES + plainBytes + Math.ceil(plainBytes / segmentBytes) * TAG_BYTES;
}

/** Encrypt (or decrypt) one segment into `out` at `at`; returns the bytes written. */
function cipherInto(
  cipher: ReturnType<typeof createCipheriv> | ReturnType<typeof createDecipheriv>,
  input: Buffer,
  out: Buffer,
  at: number,
): number {
  let written = 0;
  for (let u = 0; u < input.length; u += UPDATE_BYTES) {
    written += cipher.update(input.subarray(u, Math.min(input.length, u + UPDATE_BYTES))).copy(out, at + written);
  }
  return written + cipher.final().copy(out, at + written);
}

/** Seal a buffer (a payload) in memory. */
export function sealBuffer(key: TenantDataKey, context: SealContext, plain: Buffer): Buffer {
  const { header, dek } = newHeader(key, context, plain.length);
  const out = Buffer.allocUnsafe(sealedSize(plain.length));
  header.copy(out, 0);
  let at = HEADER_BYTES;
  for (let index = 0, from = 0; from < plain.length; index++, from += SEGMENT_BYTES) {
    const cipher = createCipheriv("aes-256-gcm", dek, segmentNonce(index));
    at += cipherInto(cipher, plain.subarray(from, from + SEGMENT_BYTES), out, at);
    at += cipher.getAuthTag().copy(out, at);
  }
  return out;
}

/** Open a buffer sealed by {@link sealBuffer}; throws {@link WrongDataKeyError} or {@link SealedFileDamagedError}. */
export function openBuffer(key: TenantDataKey, context: SealContext, sealed: Buffer): Buffer {
  const { dek, plainBytes, segmentBytes } = openHeader(key, context, sealed);
  if (sealed.length !== sealedSize(plainBytes, segmentBytes)) throw new SealedFileDamagedError("sealed size mismatch");
  const out = Buffer.allocUnsafe(plainBytes);
  let at = HEADER_BYTES;
  for (let index = 0, from = 0; from < plainBytes; index++, from += segmentBytes) {
    const length = Math.min(segmentBytes, plainBytes - from);
    const decipher = createDecipheriv("aes-256-gcm", dek, segmentNonce(index));
    decipher.setAuthTag(sealed.subarray(at + length, at + length + TAG_BYTES));
    try {
      cipherInto(decipher, sealed.subarray(at, at + length), out, from);
    } catch {
      throw new SealedFileDamagedError(`segment ${index} failed its tag`);
    }
    at += length + TAG_BYTES;
  }
  return out;
}

/** Read up to `buffer.length` bytes at the handle's position (fewer only at the end). */
async function readFully(handle: FileHandle, buffer: Buffer, length = buffer.length): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, null);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

async function writeFully(handle: FileHandle, buffer: Buffer, length: number): Promise<void> {
  for (let done = 0; done < length; ) done += (await handle.write(buffer, done, length - done)).bytesWritten;
}

/**
 * Seal the file at `plainPath` into `sealedPath`; returns the sealed size and the CRC-32 of the
 * sealed bytes (taken while writing them: a cheap check of the file before its key is at hand).
 */
export async function sealFile(
  key: TenantDataKey,
  context: SealContext,
  plainPath: string,
  sealedPath: string,
): Promise<{ bytes: number; crc: number }> {
  const input = await open(plainPath, "r");
  try {
    const plainBytes = (await input.stat()).size;
    const { header, dek } = newHeader(key, context, plainBytes);
    const output = await open(sealedPath, "w");
    try {
      await writeFully(output, header, header.length);
      let crc = crc32(header);
      const block = Buffer.allocUnsafe(BLOCK_SEGMENTS * SEGMENT_BYTES);
      const out = Buffer.allocUnsafe(BLOCK_SEGMENTS * (SEGMENT_BYTES + TAG_BYTES));
      let index = 0;
      let total = 0;
      for (;;) {
        const read = await readFully(input, block);
        if (read === 0) break;
        let at = 0;
        for (let from = 0; from < read; from += SEGMENT_BYTES, index++) {
          const cipher = createCipheriv("aes-256-gcm", dek, segmentNonce(index));
          at += cipherInto(cipher, block.subarray(from, Math.min(read, from + SEGMENT_BYTES)), out, at);
          at += cipher.getAuthTag().copy(out, at);
        }
        total += read;
        crc = crc32(out.subarray(0, at), crc);
        await writeFully(output, out, at);
      }
      if (total !== plainBytes) throw new Error(`${plainPath} changed while it was sealed`);
      return { bytes: sealedSize(plainBytes), crc };
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

/**
 * Check that `key` opens the sealed file at `sealedPath` as `context` (its header only: 76 bytes).
 * Throws {@link WrongDataKeyError} or {@link SealedFileDamagedError}; a missing file passes its
 * ENOENT through. For a plain copy kept in memory, which may be used only by the key's holder.
 */
export async function checkSealedKey(key: TenantDataKey, context: SealContext, sealedPath: string): Promise<void> {
  const input = await open(sealedPath, "r");
  try {
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    if ((await readFully(input, header)) !== HEADER_BYTES) throw new SealedFileDamagedError("sealed file truncated");
    const { plainBytes, segmentBytes } = openHeader(key, context, header);
    if ((await input.stat()).size !== sealedSize(plainBytes, segmentBytes)) {
      throw new SealedFileDamagedError("sealed file truncated or extended");
    }
  } finally {
    await input.close();
  }
}

/**
 * Open the sealed file at `sealedPath` into `plainPath`, every segment checked before the call
 * resolves (a caller uses `plainPath` only then). Throws {@link WrongDataKeyError} before writing
 * anything, or {@link SealedFileDamagedError}; a missing file passes its ENOENT through.
 */
export async function openFile(
  key: TenantDataKey,
  context: SealContext,
  sealedPath: string,
  plainPath: string,
): Promise<void> {
  const input = await open(sealedPath, "r");
  try {
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    if ((await readFully(input, header)) !== HEADER_BYTES) throw new SealedFileDamagedError("sealed file truncated");
    const { dek, plainBytes, segmentBytes } = openHeader(key, context, header);
    if ((await input.stat()).size !== sealedSize(plainBytes, segmentBytes)) {
      throw new SealedFileDamagedError("sealed file truncated or extended");
    }
    const output = await open(plainPath, "w");
    try {
      const sealedSegment = segmentBytes + TAG_BYTES;
      const block = Buffer.allocUnsafe(BLOCK_SEGMENTS * sealedSegment);
      const out = Buffer.allocUnsafe(BLOCK_SEGMENTS * segmentBytes);
      let index = 0;
      for (let left = plainBytes; left > 0; ) {
        const want = Math.min(block.length, left + Math.ceil(left / segmentBytes) * TAG_BYTES);
        const read = await readFully(input, block, want);
        if (read !== want) throw new SealedFileDamagedError("sealed file truncated");
        let at = 0;
        for (let from = 0; from < read; index++) {
          const length = Math.min(segmentBytes, read - from - TAG_BYTES);
          const decipher = createDecipheriv("aes-256-gcm", dek, segmentNonce(index));
          decipher.setAuthTag(block.subarray(from + length, from + length + TAG_BYTES));
          try {
            at += cipherInto(decipher, block.subarray(from, from + length), out, at);
          } catch {
            throw new SealedFileDamagedError(`segment ${index} failed its tag`);
          }
          from += length + TAG_BYTES;
        }
        left -= at;
        await writeFully(output, out, at);
      }
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}
