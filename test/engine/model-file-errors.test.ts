/**
 * A GGUF by path (issue 33, item 4): a file that cannot be served stops the engine with a clear
 * InvalidModelError / ModelLoadError, and the real worker entry (gpu-worker/main.ts) exits 1 with
 * one readable line; the context size follows the file's context_length unless
 * FRONTIER_CONTEXT_SIZE says otherwise; FRONTIER_KV_TYPE reaches llama.cpp.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import { type EngineOptions, GREEDY, InvalidModelError, ModelLoadError } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { FIRST_KEY_LENGTH_AT, withArchitecture, withU32 } from "../support/gguf-patch.ts";

const REPO_ROOT = resolve(import.meta.dirname, "../..");

let dir: string;
let tiny: Buffer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "frontier-model-file-"));
  tiny = await readFile(await ensureTestModel("tiny"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, bytes: Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
}

function engineOptions(modelPath: string, extra: Partial<EngineOptions> = {}): EngineOptions {
  return {
    modelPath,
    contextSize: 256,
    sequences: 1,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 64,
    ...extra,
  };
}

/** Bad files and what the engine says about each. */
async function badFiles(): Promise<Array<[string, string, RegExp]>> {
  const corruptLength = Buffer.from(tiny);
  corruptLength.writeBigUInt64LE(0xffff_ffff_ffffn, FIRST_KEY_LENGTH_AT);
  const keyLength = Number(tiny.readBigUInt64LE(FIRST_KEY_LENGTH_AT));
  const corruptType = Buffer.from(tiny);
  corruptType.writeUInt32LE(99, FIRST_KEY_LENGTH_AT + 8 + keyLength);
  return [
    ["missing", join(dir, "absent.gguf"), /absent\.gguf: no such file$/],
    ["a directory", dir, /not a regular file/],
    [
      "not a GGUF",
      await file("text.gguf", Buffer.from("this is a text file, not weights\n")),
      /bad magic 0x73696874 \(not a GGUF file\)/,
    ],
    ["empty", await file("empty.gguf", Buffer.alloc(0)), /file ends inside the GGUF header \(at byte 0/],
    ["truncated in its header", await file("head.gguf", tiny.subarray(0, 2000)), /file ends inside the GGUF header/],
    [
      "truncated in its weights",
      await file("cut.gguf", tiny.subarray(0, tiny.length - 4096)),
      /lies beyond the end of the \d+-byte file/,
    ],
    [
      "an impossible key length",
      await file("length.gguf", corruptLength),
      /metadata key length 281474976710655 is impossible/,
    ],
    ["an unknown value type", await file("type.gguf", corruptType), /has unknown value type 99/],
  ];
}

describe("a model file the engine cannot serve", () => {
  it("is refused before llama.cpp sees it, saying what is wrong", async () => {
    for (const [what, path, message] of await badFiles()) {
      const error = await createEngine(engineOptions(path)).then(
        () => new Error(`${what}: loaded`),
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(InvalidModelError);
      expect((error as Error).message, what).toMatch(message);
      expect((error as Error).message, what).toContain(path);
    }
  });

  it("an architecture llama.cpp does not know is a ModelLoadError naming the file and architecture", async () => {
    const path = await file("llamx.gguf", withArchitecture(tiny, "llama", "llamx"));
    const error = await createEngine(engineOptions(path)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    // llama.cpp's own reason is asserted through the worker entry below: after a process's first
    // Llama is disposed, node-llama-cpp delivers no more llama.cpp log lines in that process.
    expect((error as Error).message).toMatch(/^llama\.cpp could not load .*llamx\.gguf \(architecture llamx\): /);
  });
});

interface WorkerRun {
  code: number | null;
  stderr: string;
  ready: boolean;
}

/** Run the real worker entry on `modelPath`; stop it (SIGTERM) once it is ready. */
function runWorker(modelPath: string, env: Record<string, string> = {}): Promise<WorkerRun> {
  const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "gpu-worker/main.ts")], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      FRONTIER_DEV: "1",
      FRONTIER_MODEL_PATH: modelPath,
      FRONTIER_WORKER_GRPC_PORT: "0",
      FRONTIER_WORKER_HTTP_PORT: "0",
      FRONTIER_CHECKPOINT_BUDGET_MB: "0",
      FRONTIER_SEQUENCES: "1",
      FRONTIER_STATE_DIR: join(dir, "state"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let ready = false;
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.on("data", (chunk: Buffer) => {
    if (!ready && chunk.toString().includes('"ready":true')) {
      ready = true;
      child.kill("SIGTERM");
    }
  });
  return new Promise((done) => child.on("exit", (code) => done({ code, stderr, ready })));
}

/** Frontier's own log lines (llama.cpp's carry a `[node-llama-cpp]` prefix). */
function workerLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => /^\d{4}-\d\d-\d\dT/.test(line));
}

describe("the worker entry on a bad model file", () => {
  it("exits 1 with one readable line, no stack", async () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      [join(dir, "absent.gguf"), {}, /error=".*absent\.gguf: no such file"$/],
      [await file("text2.gguf", Buffer.from("plain text\n")), {}, /bad magic .*not a GGUF file/],
      [await file("cut2.gguf", tiny.subarray(0, tiny.length - 4096)), {}, /lies beyond the end/],
      [await file("llamx2.gguf", withArchitecture(tiny, "llama", "llamx")), {}, /unknown model architecture: 'llamx'/],
      [
        await file("kv.gguf", tiny),
        { FRONTIER_KV_TYPE: "q5" },
        /FRONTIER_KV_TYPE must be one of f16, q8_0, q4_0, got \\"q5\\"/,
      ],
      [
        await file("kv2.gguf", tiny),
        { FRONTIER_KV_TYPE: "q8_0" },
        /FRONTIER_KV_TYPE=q8_0 needs FRONTIER_FLASH_ATTENTION=on/,
      ],
      [
        await file("kv3.gguf", tiny),
        { FRONTIER_KV_TYPE: "q8_0", FRONTIER_FLASH_ATTENTION: "on" },
        /could not create the context \(1 x \d+ cells, KV q8_0\): .*block size 32 does not divide n_embd_head_k=16/,
      ],
    ];
    for (const [path, env, message] of cases) {
      const run = await runWorker(path, env);
      expect(run.code, path).toBe(1);
      expect(run.ready, path).toBe(false);
      const failures = workerLines(run.stderr).filter((line) => line.includes("worker failed to start"));
      expect(failures, run.stderr).toHaveLength(1);
      expect(failures[0], run.stderr).toMatch(message);
      expect(run.stderr, path).not.toMatch(/^\s+at /m);
    }
  });
});

describe("the context size", () => {
  it("follows the file's context_length, and FRONTIER_CONTEXT_SIZE overrides it", async () => {
    const path = await file("ctx1024.gguf", withU32(tiny, "llama.context_length", 1024));
    const fromFile = await runWorker(path);
    expect(fromFile.ready, fromFile.stderr).toBe(true);
    const [model] = workerLines(fromFile.stderr).filter((line) => line.includes(" model "));
    expect(model).toMatch(/ arch=llama family=chatml rule=.* context=1024 contextFrom="file context_length" kv=f16$/);
    expect(fromFile.stderr).toMatch(/worker ready .* context=1024 kv=f16 /);

    const flagged = await runWorker(path, { FRONTIER_CONTEXT_SIZE: "512" });
    expect(flagged.ready, flagged.stderr).toBe(true);
    expect(flagged.stderr).toMatch(/ model .* context=512 contextFrom=FRONTIER_CONTEXT_SIZE kv=f16/);
    expect(flagged.stderr).toMatch(/worker ready .* context=512 /);

    const capped = await runWorker(await file("ctx-big.gguf", withU32(tiny, "llama.context_length", 1_000_000)));
    expect(capped.stderr).toMatch(/ model .* context=8192 contextFrom="cap \(file context_length 1000000\)"/);
  });
});

describe("FRONTIER_KV_TYPE", () => {
  it("q8_0 with flash attention serves a model whose head size is a multiple of 32, under its own state identity", async () => {
    // Two heads of 32 (one KV head of 32) instead of four of 16.
    let bytes = withU32(tiny, "llama.attention.head_count", 2);
    bytes = withU32(bytes, "llama.attention.head_count_kv", 1);
    bytes = withU32(bytes, "llama.rope.dimension_count", 32);
    const path = await file("head32.gguf", bytes);
    const options = engineOptions(path, { flashAttention: true, tokenizerThread: false });
    const plain = await createEngine(options);
    const quantized = await createEngine({ ...options, kvCacheType: "q8_0" });
    try {
      expect(quantized.model.identity).not.toBe(plain.model.identity);
      expect(quantized.model.identity).toMatch(/^[0-9a-f]{64}$/);
      const sequence = await quantized.acquireSequence();
      await sequence.append(quantized.tokenize("Hello, world", { special: false }));
      const prompt = sequence.tokens.length;
      const sampled: number[] = [];
      for await (const token of sequence.generate({ ...GREEDY, maxTokens: 4 })) sampled.push(token);
      expect(sampled.length).toBeGreaterThan(0);
      // The last sampled token is not evaluated yet.
      expect(sequence.tokens.length).toBe(prompt + sampled.length - 1);
      sequence.dispose();
    } finally {
      await quantized.dispose();
      await plain.dispose();
    }
  });
});
