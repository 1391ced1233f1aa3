/**
 * Pure-JS GGUF header parser and validator. llama.cpp aborts the whole process (uncatchably) on
 * some malformed files (e.g. a missing `feed_forward_length`), so every file is checked here
 * before it reaches node-llama-cpp. Only the header, metadata and tensor infos are read.
 */
import { createHash } from "node:crypto";
import { readSync } from "node:fs";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { InvalidModelError } from "../engine-types.ts";
import {
  alignUp,
  GGML_TYPE_LAYOUT,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GgufValueType,
  SCALAR_SIZE,
} from "./gguf-format.ts";

export type GgufScalar = string | number | bigint | boolean;
export type GgufValue = GgufScalar | readonly GgufValue[];

export interface GgufTensorInfo {
  name: string;
  dims: readonly number[];
  type: number;
  /** Offset relative to the start of the tensor data section. */
  offset: number;
}

/** What a validated GGUF file says about itself. */
export interface GgufSummary {
  path: string;
  /** sha256 (hex) over the header, metadata and tensor-info bytes, the file size and samples of the weights. */
  identity: string;
  version: number;
  fileSize: number;
  architecture: string;
  /** `general.name`, else the file name. */
  name: string;
  trainContextSize: number;
  chatTemplate: string | undefined;
  vocabSize: number;
  /** `tokenizer.ggml.model` (e.g. `gpt2`, `llama`). */
  tokenizerModel: string;
  /** `tokenizer.ggml.pre` (the pre-tokenizer llama.cpp splits text with), when present. */
  tokenizerPre: string | undefined;
  /** Token texts as stored in the vocabulary (byte-level encoded for `gpt2`). */
  tokens: readonly string[];
  /** `tokenizer.ggml.token_type` when present. */
  tokenTypes: readonly number[] | undefined;
  /** `tokenizer.ggml.merges` when present ("left right", highest priority first). */
  merges: readonly string[] | undefined;
  bosToken: number | undefined;
  eosToken: number | undefined;
  eotToken: number | undefined;
  tensors: readonly GgufTensorInfo[];
  /** Every metadata value that is not an array. */
  metadata: ReadonlyMap<string, GgufScalar>;
}

interface RawHeader {
  /** The file's first bytes, at least up to `infoEnd`. */
  head: Buffer;
  version: number;
  kv: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  /** Bytes from the file start to the end of the tensor infos. */
  infoEnd: number;
}

/** Returns a longer prefix of the file: at least `minLength` bytes, or the whole file. */
type Grow = (minLength: number) => Buffer;

class Reader {
  pos = 0;
  constructor(
    private buf: Buffer,
    private readonly fileSize: number,
    private readonly grow: Grow,
  ) {}
  /** The bytes read so far (the file's first bytes). */
  get bytes(): Buffer {
    return this.buf;
  }
  private need(n: number): number {
    const at = this.pos;
    if (at + n > this.buf.length && this.buf.length < this.fileSize) this.buf = this.grow(at + n);
    if (at + n > this.buf.length)
      throw new InvalidModelError(`file ends inside the GGUF header (at byte ${at}, needs ${n} more)`);
    this.pos += n;
    return at;
  }
  // `need` may replace `this.buf`: call it before reading `this.buf`.
  u8(): number {
    const at = this.need(1);
    return this.buf.readUInt8(at);
  }
  u32(): number {
    const at = this.need(4);
    return this.buf.readUInt32LE(at);
  }
  u64(): bigint {
    const at = this.need(8);
    return this.buf.readBigUInt64LE(at);
  }
  /** A u64 used as a size or count: must fit the file. */
  size(what: string, limit: number = this.fileSize): number {
    // Two u32 halves, not a BigInt: this runs for each of a vocabulary's ~10^6 strings.
    const at = this.need(8);
    const low = this.buf.readUInt32LE(at);
    const high = this.buf.readUInt32LE(at + 4);
    const v = high * 2 ** 32 + low;
    if (v > limit || high >= 2 ** 21)
      throw new InvalidModelError(
        `${what} ${this.buf.readBigUInt64LE(at)} is impossible in a ${this.fileSize}-byte file`,
      );
    return v;
  }
  str(what: string): string {
    const n = this.size(what === "" ? "string length" : `${what} length`);
    const at = this.need(n);
    return this.buf.toString("utf8", at, at + n);
  }
  scalar(type: number, what: string): GgufScalar {
    const width = SCALAR_SIZE[type];
    if (type === GgufValueType.STRING) return this.str(what);
    if (width === undefined) throw new InvalidModelError(`${what} has unknown value type ${type}`);
    const at = this.need(width);
    switch (type) {
      case GgufValueType.UINT8:
        return this.buf.readUInt8(at);
      case GgufValueType.INT8:
        return this.buf.readInt8(at);
      case GgufValueType.UINT16:
        return this.buf.readUInt16LE(at);
      case GgufValueType.INT16:
        return this.buf.readInt16LE(at);
      case GgufValueType.UINT32:
        return this.buf.readUInt32LE(at);
      case GgufValueType.INT32:
        return this.buf.readInt32LE(at);
      case GgufValueType.FLOAT32:
        return this.buf.readFloatLE(at);
      case GgufValueType.BOOL:
        return this.buf.readUInt8(at) !== 0;
      case GgufValueType.UINT64:
        return this.buf.readBigUInt64LE(at);
      case GgufValueType.INT64:
        return this.buf.readBigInt64LE(at);
      default:
        return this.buf.readDoubleLE(at);
    }
  }
  value(type: number, what: string, depth = 0): GgufValue {
    if (type !== GgufValueType.ARRAY) return this.scalar(type, what);
    if (depth > 4) throw new InvalidModelError(`${what} nests arrays too deeply`);
    const elemType = this.u32();
    const count = this.size(`${what} element count`);
    const out: GgufValue[] = [];
    if (elemType === GgufValueType.STRING) for (let i = 0; i < count; i++) out.push(this.str(""));
    else for (let i = 0; i < count; i++) out.push(this.value(elemType, what, depth + 1));
    return out;
  }
}

function parseRaw(buf: Buffer, fileSize: number, grow: Grow): RawHeader {
  const r = new Reader(buf, fileSize, grow);
  const magic = r.u32();
  if (magic !== GGUF_MAGIC)
    throw new InvalidModelError(`bad magic 0x${magic.toString(16).padStart(8, "0")} (not a GGUF file)`);
  const version = r.u32();
  if (version !== 2 && version !== 3) throw new InvalidModelError(`unsupported GGUF version ${version} (need 2 or 3)`);
  const tensorCount = r.size("tensor count", 1_000_000);
  const kvCount = r.size("metadata count", 1_000_000);
  const kv = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = r.str("metadata key");
    if (kv.has(key)) throw new InvalidModelError(`duplicate metadata key ${key}`);
    kv.set(key, r.value(r.u32(), key));
  }
  const tensors: GgufTensorInfo[] = [];
  const names = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const name = r.str("tensor name");
    if (names.has(name)) throw new InvalidModelError(`duplicate tensor ${name}`);
    names.add(name);
    const nDims = r.u32();
    if (nDims < 1 || nDims > 4) throw new InvalidModelError(`tensor ${name} has ${nDims} dimensions (1-4 allowed)`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(r.size(`tensor ${name} dimension`, Number.MAX_SAFE_INTEGER));
    const type = r.u32();
    const offset = r.size(`tensor ${name} offset`, Number.MAX_SAFE_INTEGER);
    tensors.push({ name, dims, type, offset });
  }
  return { head: r.bytes, version, kv, tensors, infoEnd: r.pos };
}

function positiveInt(kv: ReadonlyMap<string, GgufValue>, key: string, required: boolean): number | undefined {
  let v = kv.get(key);
  if (v === undefined) {
    if (required) throw new InvalidModelError(`missing required metadata ${key}`);
    return undefined;
  }
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number" || typeof x === "bigint")) v = v[0]; // per-layer values
  const n = typeof v === "bigint" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n <= 0)
    throw new InvalidModelError(`metadata ${key} must be a positive integer`);
  return n;
}

function tokenId(kv: ReadonlyMap<string, GgufValue>, key: string, vocabSize: number): number | undefined {
  const v = kv.get(key);
  if (v === undefined) return undefined;
  const n = typeof v === "bigint" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n >= vocabSize)
    throw new InvalidModelError(`${key} = ${String(v)} is not a token id below ${vocabSize}`);
  return n;
}

/** Architectures without attention/feed-forward blocks, exempt from those key checks. */
const NO_ATTENTION_ARCHS = new Set(["mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"]);

function validate(raw: RawHeader, path: string, fileSize: number): Omit<GgufSummary, "identity"> {
  const { kv } = raw;
  const arch = kv.get("general.architecture");
  if (typeof arch !== "string" || arch === "") throw new InvalidModelError("missing general.architecture");
  const trainContextSize = positiveInt(kv, `${arch}.context_length`, true) ?? 0;
  positiveInt(kv, `${arch}.embedding_length`, true);
  positiveInt(kv, `${arch}.block_count`, true);
  if (!NO_ATTENTION_ARCHS.has(arch)) {
    positiveInt(kv, `${arch}.feed_forward_length`, true);
    const heads = positiveInt(kv, `${arch}.attention.head_count`, true) ?? 1;
    const kvHeads = positiveInt(kv, `${arch}.attention.head_count_kv`, false);
    if (kvHeads !== undefined && heads % kvHeads !== 0)
      throw new InvalidModelError(
        `${arch}.attention.head_count ${heads} is not a multiple of head_count_kv ${kvHeads}`,
      );
  }
  const tokenizerModel = kv.get("tokenizer.ggml.model");
  if (typeof tokenizerModel !== "string") throw new InvalidModelError("missing tokenizer.ggml.model");
  const tokens = kv.get("tokenizer.ggml.tokens");
  if (!Array.isArray(tokens) || tokens.length === 0 || !tokens.every((t): t is string => typeof t === "string"))
    throw new InvalidModelError("tokenizer.ggml.tokens must be a non-empty string array");
  const vocabSize = tokens.length;
  // llama.cpp asserts (aborts the process) when two token texts are equal; it renames empty ones first.
  const seen = new Set<string>();
  for (let i = 0; i < vocabSize; i++) {
    const text = tokens[i] === "" ? `[EMPTY_${i}]` : (tokens[i] as string);
    if (seen.has(text)) throw new InvalidModelError(`tokenizer.ggml.tokens holds ${JSON.stringify(text)} twice`);
    seen.add(text);
  }
  const tokenTypes = kv.get("tokenizer.ggml.token_type");
  if (
    tokenTypes !== undefined &&
    (!Array.isArray(tokenTypes) || tokenTypes.length !== vocabSize || !tokenTypes.every((t) => typeof t === "number"))
  )
    throw new InvalidModelError(`tokenizer.ggml.token_type must be ${vocabSize} integers`);
  const scores = kv.get("tokenizer.ggml.scores");
  if (scores !== undefined && (!Array.isArray(scores) || scores.length !== vocabSize))
    throw new InvalidModelError(`tokenizer.ggml.scores must have ${vocabSize} entries`);
  const merges = kv.get("tokenizer.ggml.merges");
  if (tokenizerModel === "gpt2" && (!Array.isArray(merges) || !merges.every((m) => typeof m === "string")))
    throw new InvalidModelError("a gpt2 tokenizer needs a tokenizer.ggml.merges string array");

  const alignment = positiveInt(kv, "general.alignment", false) ?? GGUF_DEFAULT_ALIGNMENT;
  if ((alignment & (alignment - 1)) !== 0)
    throw new InvalidModelError(`general.alignment ${alignment} is not a power of two`);
  const dataStart = alignUp(raw.infoEnd, alignment);
  for (const t of raw.tensors) {
    if (t.offset % alignment !== 0)
      throw new InvalidModelError(`tensor ${t.name} offset ${t.offset} is not aligned to ${alignment}`);
    const layout = GGML_TYPE_LAYOUT.get(t.type);
    let bytes = 0;
    if (layout !== undefined) {
      const [block, blockBytes] = layout;
      const count = t.dims.reduce((a, b) => a * b, 1);
      if ((t.dims[0] ?? 0) % block !== 0)
        throw new InvalidModelError(
          `tensor ${t.name} row of ${t.dims[0]} is not a multiple of its type's block ${block}`,
        );
      bytes = (count / block) * blockBytes;
    }
    if (dataStart + t.offset + bytes > fileSize)
      throw new InvalidModelError(
        `tensor ${t.name} data (${bytes} bytes at ${dataStart + t.offset}) lies beyond the end of the ${fileSize}-byte file`,
      );
  }
  if (!raw.tensors.some((t) => t.name === "token_embd.weight"))
    throw new InvalidModelError("tensor token_embd.weight is missing");

  const metadata = new Map<string, GgufScalar>();
  for (const [k, v] of kv) if (!Array.isArray(v)) metadata.set(k, v as GgufScalar);
  const name = kv.get("general.name");
  const chatTemplate = kv.get("tokenizer.chat_template");
  const tokenizerPre = kv.get("tokenizer.ggml.pre");
  return {
    path,
    version: raw.version,
    fileSize,
    architecture: arch,
    name: typeof name === "string" && name !== "" ? name : basename(path),
    trainContextSize,
    chatTemplate: typeof chatTemplate === "string" ? chatTemplate : undefined,
    vocabSize,
    tokenizerModel,
    tokenizerPre: typeof tokenizerPre === "string" ? tokenizerPre : undefined,
    tokens,
    tokenTypes: tokenTypes as number[] | undefined,
    merges: merges as string[] | undefined,
    bosToken: tokenId(kv, "tokenizer.ggml.bos_token_id", vocabSize),
    eosToken: tokenId(kv, "tokenizer.ggml.eos_token_id", vocabSize),
    eotToken: tokenId(kv, "tokenizer.ggml.eot_token_id", vocabSize),
    tensors: raw.tensors,
    metadata,
  };
}

/** Why a model path cannot be opened, in words (the errno code for the rest). */
function unopenable(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "is a directory, not a GGUF file";
  return `cannot be opened (${code ?? String(err)})`;
}

const IDENTITY_SAMPLES = 16;
const IDENTITY_SAMPLE_BYTES = 4096;

/**
 * Validate the GGUF at `path`, reading only as much of its head as the metadata needs.
 * Throws InvalidModelError (message prefixed with the path) when llama.cpp should not see it.
 * `identity` hashes the header/metadata/tensor-info bytes, the file size and 16 evenly spaced
 * 4 KiB samples of the tensor data (so equal-shaped models with different weights differ).
 */
export async function validateGguf(path: string): Promise<GgufSummary> {
  const fh = await open(path, "r").catch((err: unknown) => {
    throw new InvalidModelError(`${path}: ${unopenable(err)}`);
  });
  try {
    const stats = await fh.stat();
    if (!stats.isFile()) throw new InvalidModelError("not a regular file (a directory?)");
    const fileSize = stats.size;
    let head = Buffer.alloc(Math.min(fileSize, 1 << 20));
    head = head.subarray(0, readSync(fh.fd, head, 0, head.length, 0));
    // Metadata of a 200k-token vocabulary is ~10 MB: read on as the parser needs it (one parse).
    const grow: Grow = (minLength) => {
      const length = Math.min(fileSize, Math.max(minLength, head.length * 2));
      const next = Buffer.alloc(length);
      head.copy(next);
      const n = readSync(fh.fd, next, head.length, length - head.length, head.length);
      head = next.subarray(0, head.length + n);
      return head;
    };
    const raw = parseRaw(head, fileSize, grow);
    const summary = validate(raw, path, fileSize);
    const hash = createHash("sha256").update(raw.head.subarray(0, raw.infoEnd)).update(`|size=${fileSize}|`);
    const span = fileSize - raw.infoEnd;
    const sample = Buffer.alloc(IDENTITY_SAMPLE_BYTES);
    for (let i = 0; i < IDENTITY_SAMPLES && span > 0; i++) {
      const at = raw.infoEnd + Math.floor((span * i) / IDENTITY_SAMPLES);
      const { bytesRead: n } = await fh.read(sample, 0, Math.min(IDENTITY_SAMPLE_BYTES, fileSize - at), at);
      hash.update(sample.subarray(0, n));
    }
    return { ...summary, identity: hash.digest("hex") };
  } catch (err) {
    if (err instanceof InvalidModelError) throw new InvalidModelError(`${path}: ${err.message}`);
    throw err;
  } finally {
    await fh.close();
  }
}
