/**
 * llama.cpp's sequence state file (`llama_state_seq_save_file`, format version 3, the bundled
 * llama.cpp of node-llama-cpp 3.21.1) read as a set of KV cells, so a checkpoint can store only the
 * cells a turn added (a chunk) and a restore can assemble its chunks back into one state file.
 * Little-endian layout, checked against `llama_kv_cache::state_write`:
 *
 *     u32 magic 'ggsq', u32 version (3), u32 n_tokens, i32 tokens[n_tokens]
 *     u32 n_stream; per stream: u32 cell_count, and when it is > 0:
 *       cell_count × { i32 pos, u32 n_seq_id (1), i32 seq_id }
 *       u32 v_trans, u32 n_layer
 *       n_layer × { i32 k_type, u64 k_row_bytes, cell_count rows }
 *       v_trans 0: n_layer × { i32 v_type, u64 v_row_bytes, cell_count rows }
 *       v_trans 1: n_layer × { i32 v_type, u32 v_el_bytes, u32 n_embd_v, n_embd_v × cell_count elements }
 *
 * A sequence's file has one non-empty stream. Cells are independent of each other (each holds its
 * position), and a load takes them in any order, so a chunk is itself a valid state file holding
 * some cells, and chunks concatenate. Layouts this does not know (per-cell extensions of M-RoPE or
 * per-layer embeddings, layers without V, other versions) fail with {@link UnsupportedStateError};
 * the caller then writes the whole state instead. Every read is sequential (and checksummed where
 * the caller checks a chunk); layer data is read into its buffer and written gathered, never joined.
 */
import { type FileHandle, open } from "node:fs/promises";
import { crc32 } from "node:zlib";

const MAGIC = 0x67677371; // 'ggsq'
const VERSION = 3;
const CELL_META_BYTES = 12;
const MAX_LAYERS = 4096;

export class UnsupportedStateError extends Error {
  override readonly name = "UnsupportedStateError";
}

/** Read-ahead of small reads (headers, cell metadata); larger ones go straight into their buffer. */
const READ_AHEAD = 1 << 20;

/** A file read front to back, with the CRC-32 (when asked for) and size of everything read. */
class SequentialReader {
  #at = 0;
  #ahead = Buffer.alloc(0);
  crc = 0;
  private constructor(
    private readonly handle: FileHandle,
    readonly size: number,
    private readonly checksummed: boolean,
  ) {}

  static async open(path: string, options: { checksum?: boolean } = {}): Promise<SequentialReader> {
    const handle = await open(path, "r");
    return new SequentialReader(handle, (await handle.stat()).size, options.checksum ?? true);
  }

  get at(): number {
    return this.#at;
  }

  async take(bytes: number): Promise<Buffer> {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || this.#at + bytes > this.size) {
      throw new UnsupportedStateError(`state file ends before ${bytes} more bytes at ${this.#at}`);
    }
    if (bytes > this.#ahead.length && bytes <= READ_AHEAD) {
      this.#ahead = Buffer.concat([this.#ahead, await this.#read(this.#at + this.#ahead.length, READ_AHEAD)]);
    }
    let out: Buffer;
    if (bytes <= this.#ahead.length) {
      out = Buffer.from(this.#ahead.subarray(0, bytes));
      this.#ahead = this.#ahead.subarray(bytes);
    } else {
      // A large read (layer data) goes straight into its buffer after what was read ahead: no copy.
      out = Buffer.allocUnsafe(bytes);
      const ahead = this.#ahead.copy(out, 0);
      this.#ahead = Buffer.alloc(0);
      const read = await this.#readInto(out, ahead, this.#at + ahead);
      if (read !== bytes) throw new UnsupportedStateError("state file shrank while read");
    }
    this.#at += bytes;
    if (this.checksummed) this.crc = crc32(out, this.crc);
    return out;
  }

  /** Up to `bytes` bytes at `position` (fewer only at the end of the file). */
  async #read(position: number, bytes: number): Promise<Buffer> {
    const out = Buffer.allocUnsafe(Math.max(0, Math.min(bytes, this.size - position)));
    return out.subarray(0, await this.#readInto(out, 0, position));
  }

  /** Fill `out` from `offset` with the bytes at `position` on; the end of `out`'s data (short only at the end of the file). */
  async #readInto(out: Buffer, offset: number, position: number): Promise<number> {
    let done = offset;
    while (done < out.length) {
      const { bytesRead } = await this.handle.read(out, done, out.length - done, position + done - offset);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return done;
  }

  async u32(): Promise<number> {
    return (await this.take(4)).readUInt32LE(0);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/** The part of a state file before its layer data. */
interface StateHead {
  tokens: Buffer;
  nStream: number;
  /** Index of the non-empty stream (-1: no cells). */
  stream: number;
  cellCount: number;
  meta: Buffer;
  vTrans: number;
  nLayer: number;
}

async function readHead(reader: SequentialReader): Promise<StateHead> {
  const start = await reader.take(12);
  if (start.readUInt32LE(0) !== MAGIC || start.readUInt32LE(4) !== VERSION) {
    throw new UnsupportedStateError("not a version-3 sequence state file");
  }
  const tokens = await reader.take(start.readUInt32LE(8) * 4);
  const nStream = await reader.u32();
  if (nStream === 0 || nStream > 4096) throw new UnsupportedStateError(`implausible stream count ${nStream}`);
  for (let s = 0; s < nStream; s++) {
    const cellCount = await reader.u32();
    if (cellCount === 0) continue;
    const meta = await reader.take(cellCount * CELL_META_BYTES);
    for (let i = 0; i < cellCount; i++) {
      if (meta.readUInt32LE(i * CELL_META_BYTES + 4) !== 1) {
        throw new UnsupportedStateError("a cell of a sequence state holds another layout");
      }
    }
    const vTrans = await reader.u32();
    const nLayer = await reader.u32();
    if (vTrans > 1 || nLayer === 0 || nLayer > MAX_LAYERS) throw new UnsupportedStateError("unknown layer layout");
    return { tokens, nStream, stream: s, cellCount, meta, vTrans, nLayer };
  }
  return { tokens, nStream, stream: -1, cellCount: 0, meta: Buffer.alloc(0), vTrans: 0, nLayer: 0 };
}

/** One layer's K or V section: its 12-byte header and its data as `rows` × `rowBytes` (V transposed: by element). */
interface Section {
  header: Buffer;
  data: Buffer;
  /** Rows of `rowBytes` bytes: cells (K, plain V) or embedding elements (transposed V). */
  rows: number;
  rowBytes: number;
}

async function readSection(reader: SequentialReader, cells: number, transposed: boolean): Promise<Section> {
  const header = await reader.take(12);
  if (transposed) {
    const elBytes = header.readUInt32LE(4);
    const embd = header.readUInt32LE(8);
    const data = await reader.take(embd * cells * elBytes);
    return { header, data, rows: embd, rowBytes: cells * elBytes };
  }
  const rowBytes = Number(header.readBigUInt64LE(4));
  return { header, data: await reader.take(rowBytes * cells), rows: cells, rowBytes };
}

/** After the non-empty stream: the remaining streams' zero counts, then the end of the file. */
async function readTail(reader: SequentialReader, head: StateHead): Promise<void> {
  for (let s = head.stream + 1; head.stream >= 0 && s < head.nStream; s++) {
    if ((await reader.u32()) !== 0) throw new UnsupportedStateError("a sequence state with two non-empty streams");
  }
  if (reader.at !== reader.size) throw new UnsupportedStateError("unknown data after the KV cells");
}

function u32(value: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32LE(value, 0);
  return out;
}

/** Writes the head of a state file holding `cells` cells of `tokens` (in stream `stream` of `nStream`). */
function headBytes(head: Omit<StateHead, "cellCount">, cells: number): Buffer[] {
  const parts = [u32(MAGIC), u32(VERSION), u32(head.tokens.length / 4), head.tokens, u32(head.nStream)];
  const stream = Math.max(0, head.stream);
  for (let s = 0; s < stream; s++) parts.push(u32(0));
  parts.push(u32(cells));
  if (cells > 0) parts.push(head.meta, u32(head.vTrans), u32(head.nLayer));
  for (let s = stream + 1; cells === 0 && s < head.nStream; s++) parts.push(u32(0));
  return parts;
}

function trailingZeros(head: Pick<StateHead, "stream" | "nStream">): Buffer[] {
  const parts: Buffer[] = [];
  for (let s = Math.max(0, head.stream) + 1; s < head.nStream; s++) parts.push(u32(0));
  return parts;
}

async function writeAll(path: string, produce: (write: (parts: Buffer[]) => Promise<void>) => Promise<void>) {
  const handle = await open(path, "w");
  let bytes = 0;
  try {
    // Gathered writes: the parts (whole layers, or rows of a transposed V) are never joined in memory.
    await produce(async (parts) => {
      const left = parts.filter((part) => part.length > 0);
      while (left.length > 0) {
        let written = (await handle.writev(left)).bytesWritten;
        bytes += written;
        while (left.length > 0 && written >= (left[0]?.length ?? 0)) written -= left.shift()?.length ?? 0;
        if (written > 0 && left[0]) left[0] = left[0].subarray(written);
      }
    });
  } finally {
    await handle.close();
  }
  return bytes;
}

/**
 * Write to `outPath` the cells of state file `fullPath` at positions ≥ `fromPos` (and the tokens
 * from `fromPos` on): a chunk that extends a state holding the positions before it. Returns the
 * chunk's cell count and size.
 */
export async function sliceState(
  fullPath: string,
  fromPos: number,
  outPath: string,
): Promise<{ cells: number; bytes: number }> {
  const reader = await SequentialReader.open(fullPath);
  try {
    const head = await readHead(reader);
    const keep: number[] = [];
    for (let i = 0; i < head.cellCount; i++) {
      if (head.meta.readInt32LE(i * CELL_META_BYTES) >= fromPos) keep.push(i);
    }
    const meta = Buffer.concat(keep.map((i) => head.meta.subarray(i * CELL_META_BYTES, (i + 1) * CELL_META_BYTES)));
    const tokens = head.tokens.subarray(Math.min(head.tokens.length, fromPos * 4));
    const bytes = await writeAll(outPath, async (write) => {
      await write(headBytes({ ...head, tokens, meta }, keep.length));
      for (let part = 0; part < 2 * head.nLayer; part++) {
        const transposed = part >= head.nLayer && head.vTrans === 1;
        const section = await readSection(reader, head.cellCount, transposed);
        const out = [section.header];
        if (transposed) {
          const el = section.rowBytes / Math.max(1, head.cellCount);
          for (let j = 0; j < section.rows; j++) {
            out.push(pickRows(section.data.subarray(j * section.rowBytes, (j + 1) * section.rowBytes), keep, el));
          }
        } else {
          out.push(pickRows(section.data, keep, section.rowBytes));
        }
        if (keep.length > 0) await write(out);
      }
      await readTail(reader, head);
      if (keep.length > 0) await write(trailingZeros(head));
    });
    return { cells: keep.length, bytes };
  } finally {
    await reader.close();
  }
}

/** The rows `indexes` (ascending) of `data`, copied in runs. */
function pickRows(data: Buffer, indexes: readonly number[], rowBytes: number): Buffer {
  const out = Buffer.allocUnsafe(indexes.length * rowBytes);
  let at = 0;
  for (let k = 0; k < indexes.length; ) {
    const first = indexes[k] ?? 0;
    let end = k + 1;
    while (end < indexes.length && indexes[end] === first + (end - k)) end++;
    data.copy(out, at, first * rowBytes, (first + end - k) * rowBytes);
    at += (end - k) * rowBytes;
    k = end;
  }
  return out;
}

/** What a chunk must match: CRC-32 and size (undefined: not checked). */
export interface ChunkCheck {
  readonly crc: number;
  readonly bytes: number;
}

/**
 * Assemble chunk files (oldest first) into one state file at `outPath`, checking each chunk against
 * `checks[i]` while reading it (every byte of a chunk is read exactly once). Throws
 * {@link ChunkChecksumError} naming the chunk whose check failed (the output is then unusable).
 */
export async function assembleState(paths: readonly string[], checks: readonly ChunkCheck[], outPath: string) {
  const readers: SequentialReader[] = [];
  try {
    for (const [i, path] of paths.entries()) {
      readers.push(await SequentialReader.open(path, { checksum: checks[i] !== undefined }));
    }
    const heads: StateHead[] = [];
    for (const reader of readers) heads.push(await readHead(reader));
    const filled = heads.filter((h) => h.cellCount > 0);
    const first = filled[0] ?? heads[0];
    if (!first) throw new UnsupportedStateError("no chunks to assemble");
    for (const h of filled) {
      if (h.nStream !== first.nStream || h.vTrans !== first.vTrans || h.nLayer !== first.nLayer) {
        throw new UnsupportedStateError("chunks of different layouts");
      }
    }
    const cells = filled.reduce((n, h) => n + h.cellCount, 0);
    const merged = {
      ...first,
      tokens: Buffer.concat(heads.map((h) => h.tokens)),
      meta: Buffer.concat(filled.map((h) => h.meta)),
    };
    return await writeAll(outPath, async (write) => {
      await write(headBytes(merged, cells));
      for (let part = 0; part < 2 * first.nLayer; part++) {
        const transposed = part >= first.nLayer && first.vTrans === 1;
        const sections: Section[] = [];
        for (const [i, reader] of readers.entries()) {
          const h = heads[i];
          if (h && h.cellCount > 0) sections.push(await readSection(reader, h.cellCount, transposed));
        }
        const header = sections[0]?.header ?? Buffer.alloc(0);
        if (sections.some((s) => !s.header.equals(header))) throw new UnsupportedStateError("chunks of other types");
        const out = [header];
        if (transposed) {
          for (let j = 0; j < (sections[0]?.rows ?? 0); j++) {
            for (const s of sections) out.push(s.data.subarray(j * s.rowBytes, (j + 1) * s.rowBytes));
          }
        } else {
          for (const s of sections) out.push(s.data);
        }
        await write(out);
      }
      for (const [i, reader] of readers.entries()) {
        const h = heads[i];
        if (h) await readTail(reader, h);
        const check = checks[i];
        if (check && (reader.crc >>> 0 !== check.crc || reader.size !== check.bytes)) {
          throw new ChunkChecksumError(i);
        }
      }
      if (cells > 0) await write(trailingZeros(merged));
    });
  } finally {
    await Promise.all(readers.map((r) => r.close()));
  }
}

export class ChunkChecksumError extends Error {
  override readonly name = "ChunkChecksumError";
  constructor(readonly chunk: number) {
    super(`state chunk ${chunk} failed its checksum`);
  }
}
