/**
 * A dependency-free, seeded, deterministic GGUF v3 writer for small random `llama` models.
 * Same size + seed => byte-identical file. Used to make test and benchmark models locally
 * (no weights can be downloaded on these machines).
 */
import { randomBytes } from "node:crypto";
import { access, mkdir, open, rename, rm } from "node:fs/promises";
import { endianness } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { alignUp, GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GGUF_VERSION, GgmlType, GgufValueType } from "./gguf-format.ts";
import { buildVocab } from "./vocab.ts";

export type TestModelSize = "tiny" | "mid" | "large";

/** Shape of a generated model. */
export interface TestModelSpec {
  embedding: number;
  layers: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  vocab: number;
  /** Element type of the matrices (norm weights are always F32). */
  weightType: "F32" | "F16";
}

export const TEST_MODEL_SPECS: Readonly<Record<TestModelSize, TestModelSpec>> = {
  tiny: { embedding: 64, layers: 2, heads: 4, kvHeads: 2, feedForward: 128, vocab: 512, weightType: "F32" },
  mid: { embedding: 512, layers: 8, heads: 8, kvHeads: 8, feedForward: 1408, vocab: 2048, weightType: "F16" },
  /** ~0.8B parameters (1.5 GB): for GPU benchmarks (scripts/gpu-bench.sh); too slow for CPU. */
  large: { embedding: 2048, layers: 16, heads: 16, kvHeads: 8, feedForward: 5632, vocab: 2048, weightType: "F16" },
};

/** Bump when the generator's output changes, so cached files are regenerated. */
export const TEST_MODEL_VERSION = 2;
export const DEFAULT_TEST_MODEL_SEED = 1;
export const TEST_MODEL_CONTEXT_LENGTH = 131072;

const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Little-endian byte builder for the header part of the file. */
class ByteBuilder {
  private buf = Buffer.alloc(1 << 16);
  length = 0;
  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.alloc(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  u32(v: number): void {
    this.reserve(4);
    this.buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }
  i32(v: number): void {
    this.reserve(4);
    this.buf.writeInt32LE(v, this.length);
    this.length += 4;
  }
  u64(v: number): void {
    this.reserve(8);
    this.buf.writeBigUInt64LE(BigInt(v), this.length);
    this.length += 8;
  }
  f32(v: number): void {
    this.reserve(4);
    this.buf.writeFloatLE(v, this.length);
    this.length += 4;
  }
  u8(v: number): void {
    this.reserve(1);
    this.buf.writeUInt8(v, this.length);
    this.length += 1;
  }
  str(s: string): void {
    const n = Buffer.byteLength(s, "utf8");
    this.u64(n);
    this.reserve(n);
    this.buf.write(s, this.length, n, "utf8");
    this.length += n;
  }
  pad(alignment: number): void {
    const n = alignUp(this.length, alignment) - this.length;
    this.reserve(n);
    this.length += n;
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** One GGUF metadata value, tagged with how it is written. */
export type MetaValue =
  | { t: "u32"; v: number }
  | { t: "f32"; v: number }
  | { t: "bool"; v: boolean }
  | { t: "str"; v: string }
  | { t: "strs"; v: readonly string[] }
  | { t: "i32s"; v: readonly number[] };

function writeMeta(b: ByteBuilder, key: string, m: MetaValue): void {
  b.str(key);
  switch (m.t) {
    case "u32":
      b.u32(GgufValueType.UINT32);
      b.u32(m.v);
      break;
    case "f32":
      b.u32(GgufValueType.FLOAT32);
      b.f32(m.v);
      break;
    case "bool":
      b.u32(GgufValueType.BOOL);
      b.u8(m.v ? 1 : 0);
      break;
    case "str":
      b.u32(GgufValueType.STRING);
      b.str(m.v);
      break;
    case "strs":
      b.u32(GgufValueType.ARRAY);
      b.u32(GgufValueType.STRING);
      b.u64(m.v.length);
      for (const s of m.v) b.str(s);
      break;
    case "i32s":
      b.u32(GgufValueType.ARRAY);
      b.u32(GgufValueType.INT32);
      b.u64(m.v.length);
      for (const x of m.v) b.i32(x);
      break;
  }
}

export interface TensorPlan {
  name: string;
  /** ggml dims, innermost first. */
  dims: readonly number[];
  type: number;
  /** Standard deviation of the random init; `undefined` = all ones (norm weights). */
  std: number | undefined;
}

/** The tensors of a `llama` model of shape `s`; `tieOutput` omits `output.weight` (llama.cpp then reuses token_embd). */
export function planTensors(s: TestModelSpec, tieOutput = false): TensorPlan[] {
  const w = s.weightType === "F16" ? GgmlType.F16 : GgmlType.F32;
  const headDim = s.embedding / s.heads;
  const kvDim = headDim * s.kvHeads;
  const inv = (fanIn: number): number => 1 / Math.sqrt(fanIn);
  const plan: TensorPlan[] = [
    { name: "token_embd.weight", dims: [s.embedding, s.vocab], type: w, std: 1 },
    { name: "output_norm.weight", dims: [s.embedding], type: GgmlType.F32, std: undefined },
  ];
  // Large-ish logits (std ~3) keep greedy choices far from ties, so F16 noise rarely flips them.
  // Tied to token_embd (std 1) the logits are larger still (std ~sqrt(embedding)).
  if (!tieOutput)
    plan.push({ name: "output.weight", dims: [s.embedding, s.vocab], type: w, std: 3 * inv(s.embedding) });
  for (let i = 0; i < s.layers; i++) {
    const p = `blk.${i}.`;
    plan.push(
      { name: `${p}attn_norm.weight`, dims: [s.embedding], type: GgmlType.F32, std: undefined },
      { name: `${p}attn_q.weight`, dims: [s.embedding, s.embedding], type: w, std: inv(s.embedding) },
      { name: `${p}attn_k.weight`, dims: [s.embedding, kvDim], type: w, std: inv(s.embedding) },
      { name: `${p}attn_v.weight`, dims: [s.embedding, kvDim], type: w, std: inv(s.embedding) },
      { name: `${p}attn_output.weight`, dims: [s.embedding, s.embedding], type: w, std: inv(s.embedding) },
      { name: `${p}ffn_norm.weight`, dims: [s.embedding], type: GgmlType.F32, std: undefined },
      { name: `${p}ffn_gate.weight`, dims: [s.embedding, s.feedForward], type: w, std: inv(s.embedding) },
      { name: `${p}ffn_up.weight`, dims: [s.embedding, s.feedForward], type: w, std: inv(s.embedding) },
      { name: `${p}ffn_down.weight`, dims: [s.feedForward, s.embedding], type: w, std: inv(s.feedForward) },
    );
  }
  return plan;
}

/** mulberry32: a small deterministic 32-bit PRNG returning floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);
/** IEEE half-precision bits of `v`, rounded to nearest even. */
export function toFloat16Bits(v: number): number {
  f32Scratch[0] = v;
  const x = u32Scratch[0] ?? 0;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1) === 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h++; // a carry rolls into the exponent correctly
  return sign | h;
}

function tensorBytes(t: TensorPlan, rand: () => number): Buffer {
  const count = t.dims.reduce((a, b) => a * b, 1);
  const half = t.type === GgmlType.F16;
  const out = Buffer.alloc(count * (half ? 2 : 4));
  // Typed views write in host byte order; GGUF is little-endian (checked in writeTestModel).
  const f32 = half ? undefined : new Float32Array(out.buffer, out.byteOffset, count);
  const f16 = half ? new Uint16Array(out.buffer, out.byteOffset, count) : undefined;
  for (let i = 0; i < count; i++) {
    // Sum of three uniforms (Irwin-Hall): bell-shaped, unit variance, no transcendental math => portable.
    const v = t.std === undefined ? 1 : (rand() + rand() + rand() - 1.5) * 2 * t.std;
    if (f16 !== undefined) f16[i] = toFloat16Bits(v);
    else if (f32 !== undefined) f32[i] = v;
  }
  return out;
}

/** Metadata shared by every generated `llama` model (architecture and shape). */
export function llamaShapeMeta(name: string, spec: TestModelSpec): Array<[string, MetaValue]> {
  return [
    ["general.architecture", { t: "str", v: "llama" }],
    ["general.name", { t: "str", v: name }],
    ["general.alignment", { t: "u32", v: GGUF_DEFAULT_ALIGNMENT }],
    ["general.file_type", { t: "u32", v: spec.weightType === "F16" ? 1 : 0 }],
    ["llama.context_length", { t: "u32", v: TEST_MODEL_CONTEXT_LENGTH }],
    ["llama.embedding_length", { t: "u32", v: spec.embedding }],
    ["llama.block_count", { t: "u32", v: spec.layers }],
    ["llama.feed_forward_length", { t: "u32", v: spec.feedForward }],
    ["llama.attention.head_count", { t: "u32", v: spec.heads }],
    ["llama.attention.head_count_kv", { t: "u32", v: spec.kvHeads }],
    ["llama.attention.layer_norm_rms_epsilon", { t: "f32", v: 1e-5 }],
    ["llama.rope.freq_base", { t: "f32", v: 10000 }],
    ["llama.rope.dimension_count", { t: "u32", v: spec.embedding / spec.heads }],
    ["llama.vocab_size", { t: "u32", v: spec.vocab }],
  ];
}

function byteVocabMeta(spec: TestModelSpec, tokenizerPre: string): Array<[string, MetaValue]> {
  const vocab = buildVocab(spec.vocab);
  const ctl = (text: string): number => {
    const id = vocab.control.get(text);
    if (id === undefined) throw new Error(`control token ${text} missing from the generated vocabulary`);
    return id;
  };
  return [
    ["tokenizer.ggml.model", { t: "str", v: "gpt2" }],
    ["tokenizer.ggml.pre", { t: "str", v: tokenizerPre }],
    ["tokenizer.ggml.tokens", { t: "strs", v: vocab.tokens }],
    ["tokenizer.ggml.token_type", { t: "i32s", v: vocab.tokenTypes }],
    ["tokenizer.ggml.merges", { t: "strs", v: vocab.merges }],
    ["tokenizer.ggml.bos_token_id", { t: "u32", v: ctl("<|endoftext|>") }],
    ["tokenizer.ggml.eos_token_id", { t: "u32", v: ctl("<|im_end|>") }],
    ["tokenizer.ggml.eot_token_id", { t: "u32", v: ctl("<|im_end|>") }],
    ["tokenizer.ggml.padding_token_id", { t: "u32", v: ctl("<|endoftext|>") }],
    ["tokenizer.ggml.add_bos_token", { t: "bool", v: false }],
    ["tokenizer.ggml.add_eos_token", { t: "bool", v: false }],
    ["tokenizer.chat_template", { t: "str", v: CHATML_TEMPLATE }],
  ];
}

function buildHeader(
  meta: ReadonlyArray<readonly [string, MetaValue]>,
  plan: readonly TensorPlan[],
): { header: Buffer; offsets: number[] } {
  const b = new ByteBuilder();
  b.u32(GGUF_MAGIC);
  b.u32(GGUF_VERSION);
  b.u64(plan.length);
  b.u64(meta.length);
  for (const [key, value] of meta) writeMeta(b, key, value);
  const offsets: number[] = [];
  let offset = 0;
  for (const t of plan) {
    b.str(t.name);
    b.u32(t.dims.length);
    for (const d of t.dims) b.u64(d);
    b.u32(t.type);
    b.u64(offset);
    offsets.push(offset);
    const bytes = t.dims.reduce((x, y) => x * y, 1) * (t.type === GgmlType.F16 ? 2 : 4);
    offset = alignUp(offset + bytes, GGUF_DEFAULT_ALIGNMENT);
  }
  b.pad(GGUF_DEFAULT_ALIGNMENT);
  return { header: Buffer.from(b.bytes()), offsets };
}

/** Write a GGUF with `meta` and seeded random tensors of `plan` to `path` (atomically: temp file + rename). */
export async function writeGguf(
  path: string,
  meta: ReadonlyArray<readonly [string, MetaValue]>,
  plan: readonly TensorPlan[],
  seed: number,
): Promise<void> {
  if (endianness() !== "LE") throw new Error("writing a GGUF needs a little-endian host");
  const { header, offsets } = buildHeader(meta, plan);
  const rand = mulberry32(seed);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const fh = await open(tmp, "w");
  try {
    await fh.write(header, 0, header.length, 0);
    for (let i = 0; i < plan.length; i++) {
      const t = plan[i];
      const off = offsets[i];
      if (t === undefined || off === undefined) throw new Error("tensor plan and offsets disagree");
      const data = tensorBytes(t, rand);
      await fh.write(data, 0, data.length, header.length + off);
    }
    await fh.sync();
  } catch (err) {
    await fh.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  await rename(tmp, path);
}

/** Write a random `llama` GGUF of the given size to `path` (atomically: temp file + rename). */
export async function writeTestModel(
  path: string,
  size: TestModelSize,
  seed: number = DEFAULT_TEST_MODEL_SEED,
  /** `tokenizer.ggml.pre`: which llama.cpp pre-tokenizer splits text (tests of other pre-tokenizers). */
  tokenizerPre = "default",
): Promise<void> {
  const spec = TEST_MODEL_SPECS[size];
  const meta = [...llamaShapeMeta(`frontier-test-${size}`, spec), ...byteVocabMeta(spec, tokenizerPre)];
  await writeGguf(path, meta, planTensors(spec), seed);
}

/** Where generated models live: `$FRONTIER_MODELS_DIR`, else `<repo>/.models`. */
export function testModelsDir(): string {
  const env = process.env.FRONTIER_MODELS_DIR;
  if (env !== undefined && env !== "") return resolve(env);
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..", ".models");
}

/** Path of the cached test model of `size` (it may not exist yet). */
export function testModelPath(size: TestModelSize): string {
  return join(testModelsDir(), `frontier-${size}-v${TEST_MODEL_VERSION}.gguf`);
}

const pending = new Map<string, Promise<string>>();

/** Return the path of the cached test model of `size`, generating it (seed 1) once if missing. */
export function ensureTestModel(size: TestModelSize): Promise<string> {
  const path = testModelPath(size);
  let p = pending.get(path);
  if (p === undefined) {
    p = access(path).then(
      () => path,
      async (err: unknown) => {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        await writeTestModel(path, size, DEFAULT_TEST_MODEL_SEED);
        return path;
      },
    );
    // Forget a failed attempt so the next call retries; the caller still gets the rejection from `p`.
    p.catch(() => pending.delete(path));
    pending.set(path, p);
  }
  return p;
}
