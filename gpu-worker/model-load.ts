/**
 * The worker's model: the configured GGUF (FRONTIER_MODEL_PATH) or the generated test model, its
 * chat format, its context size, and the engine over it. Logs one line saying what was chosen and why.
 */
import { createEngine, inspectModel } from "../native/engine.ts";
import type { Engine } from "../native/engine-types.ts";
import { selectChatFormat } from "./chat/select-format.ts";
import type { ChatFormat } from "./chat/types.ts";
import type { WorkerEnvConfig } from "./config.ts";
import { log } from "./log.ts";
import {
  describeContextSource,
  MODEL_FILE_CONTEXT_CAP,
  resolveContextSize,
  TEST_MODEL_CONTEXT_CAP,
} from "./model-context.ts";

export interface LoadedWorkerModel {
  engine: Engine;
  format: ChatFormat;
  /** KV cells per sequence the engine was created with. */
  contextSize: number;
}

export async function loadModel(config: WorkerEnvConfig): Promise<LoadedWorkerModel> {
  const modelPath = config.modelPath ?? (await generatedTestModel(config.testModelSize));
  const info = await inspectModel(modelPath);
  const harmony = config.harmonyDate === undefined ? {} : { currentDate: config.harmonyDate };
  const { format, rule } = selectChatFormat(config.chatFormat, info, harmony);
  const cap = config.modelPath === undefined ? TEST_MODEL_CONTEXT_CAP : MODEL_FILE_CONTEXT_CAP;
  const fileContextLength = info.trainContextSize;
  const context = resolveContextSize({ flag: config.contextSizeFlag, fileContextLength, cap });
  const kvCacheType = config.kvCacheType ?? "f16";
  log("model", {
    path: modelPath,
    arch: info.architecture,
    family: format.name,
    rule,
    context: context.size,
    contextFrom: describeContextSource(context, fileContextLength),
    kv: kvCacheType,
  });
  const { sequences, threads, gpu, flashAttention, batchSize, prefixCopy } = config;
  const engine = await createEngine({
    modelPath,
    contextSize: context.size,
    sequences,
    threads,
    gpu,
    flashAttention,
    batchSize,
    kvCacheType,
    endOfGenerationTexts: format.endOfGenerationTexts,
    ...(prefixCopy === undefined ? {} : { prefixCopy }),
  });
  return { engine, format, contextSize: context.size };
}

/** The generated random-weight test model (the generator loads only when no model path is set). */
async function generatedTestModel(size: WorkerEnvConfig["testModelSize"]): Promise<string> {
  const { ensureTestModel } = await import("../native/model/gguf-writer.ts");
  return ensureTestModel(size);
}
