/**
 * Loading a validated GGUF into llama.cpp: the binary, the model and its one context. A refusal
 * by llama.cpp becomes a ModelLoadError that says why (llama.cpp's own log line), never a bare
 * "Failed to load model".
 */
import { createHash } from "node:crypto";
import { getLlama, type Llama, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import { type EngineBuild, type EngineOptions, type KvCacheType, ModelLoadError } from "./engine-types.ts";
import { LlamaErrorLog } from "./llama-error-log.ts";
import type { GgufSummary } from "./model/gguf-validate.ts";

export interface LoadedModel {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  build: EngineBuild;
}

/** node-llama-cpp's GgmlType names for the KV types a worker may be configured with. */
const GGML_KV_TYPE = { f16: "F16", q8_0: "Q8_0", q4_0: "Q4_0" } as const satisfies Record<KvCacheType, string>;

/** The binary, the model and one context of `sequences` x `contextSize` cells. */
export async function loadLlamaModel(options: EngineOptions, summary: GgufSummary): Promise<LoadedModel> {
  const errors = new LlamaErrorLog();
  const llama = await getLlama({
    gpu: options.gpu === false ? false : "auto",
    build: "never",
    maxThreads: options.threads,
    logger: errors.logger,
  });
  let model: LlamaModel | undefined;
  try {
    model = await llama.loadModel({ modelPath: options.modelPath }).catch(async (err: unknown) => {
      throw await refusal(
        `llama.cpp could not load ${options.modelPath} (architecture ${summary.architecture})`,
        err,
        errors,
      );
    });
    errors.clear();
    const kvType = GGML_KV_TYPE[options.kvCacheType ?? "f16"];
    const context = await model
      .createContext({
        contextSize: options.contextSize,
        sequences: options.sequences,
        threads: options.threads,
        batchSize: options.batchSize,
        flashAttention: options.flashAttention,
        ...(kvType === "F16" ? {} : { experimentalKvCacheKeyType: kvType, experimentalKvCacheValueType: kvType }),
      })
      .catch(async (err: unknown) => {
        const what = `${options.sequences} x ${options.contextSize} cells, KV ${options.kvCacheType ?? "f16"}`;
        throw await refusal(`llama.cpp could not create the context (${what})`, err, errors);
      });
    return { llama, model, context, build: Object.freeze(engineBuild(llama)) };
  } catch (err) {
    await model?.dispose();
    await llama.dispose();
    throw err;
  }
}

async function refusal(what: string, err: unknown, errors: LlamaErrorLog): Promise<ModelLoadError> {
  const reason = (await errors.reason()) ?? (err instanceof Error ? err.message : String(err));
  return new ModelLoadError(`${what}: ${reason}`);
}

/**
 * The identity that guards saved KV states: the file's, plus the KV type when it is not f16 (a
 * state saved with one KV type cannot be restored into a context of another).
 */
export function stateIdentity(fileIdentity: string, kvCacheType: KvCacheType | undefined): string {
  if (kvCacheType === undefined || kvCacheType === "f16") return fileIdentity;
  return createHash("sha256").update(`${fileIdentity}|kv=${kvCacheType}`).digest("hex");
}

/**
 * Which binary `getLlama` loaded. With `build: "never"` node-llama-cpp looks for a local build
 * (localBuilds/<platform>-<arch>[-<gpu>], made by `npm run build:engine`) before its prebuilt binary.
 */
function engineBuild(llama: Llama): EngineBuild {
  // systemInfo: "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | ... | AVX512 = 0 | ..."; keep the features that are on.
  const cpuFeatures = [...llama.systemInfo.matchAll(/([A-Z][A-Z0-9_]*) = 1/g)].map((m) => m[1]).join(" ");
  return {
    origin: llama.buildType === "localBuild" ? "local" : "prebuilt",
    backend: llama.gpu === false ? "cpu" : llama.gpu,
    llamaCppRelease: llama.llamaCppRelease.release,
    cpuFeatures,
  };
}
