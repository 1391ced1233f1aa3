/**
 * llama.cpp's sequence copy (`llama_memory_seq_cp`) for node-llama-cpp's context, through the
 * binding in this folder (sequence-copy.cpp, built by `npm install`). The one file that touches
 * node-llama-cpp's internals for it: the native context and model objects the binding unwraps, the
 * locks node-llama-cpp takes around a decode, and the token mirror a state load resets (node-llama-cpp
 * is pinned exactly; `probeSequenceCopy` checks all of it before the worker relies on it).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { LlamaContext, LlamaContextSequence, LlamaModel } from "node-llama-cpp";
import type { Token } from "../engine-types.ts";

/** The compiled binding (sequence-copy.cpp). */
interface SequenceCopyBinding {
  probe(context: object, model: object, cells: number, batch: number, sequences: number): string;
  copyPrefix(
    context: object,
    model: object,
    cells: number,
    batch: number,
    sequences: number,
    source: number,
    target: number,
    length: number,
    lastToken: number,
  ): boolean;
}

/** What this file reads of node-llama-cpp 3.21.1's objects (marked @internal there). */
interface ContextInternals {
  _ctx: object & { getContextSize(): number };
}
interface ModelInternals {
  _model: object;
}
interface SequenceInternals {
  _sequenceId: number;
  _lock: object;
  _contextTokens: Token[];
  _nextTokenIndex: number;
  _loadedTokenPredictions: unknown[];
}

/** lifecycle-utils' lock, the same module instance node-llama-cpp locks its context with. */
type AcquireLock = (scope: readonly [object, string]) => Promise<{ dispose(): void }>;

const SEQUENCE_COPY_BINARY = new URL("./build/sequence-copy.node", import.meta.url);

export type SequenceCopyProbe = { ok: true; copier: SequenceCopier; library: string } | { ok: false; why: string };

/** Whether llama.cpp's sequence copy works in this context; why not, when it does not. */
export async function probeSequenceCopy(
  context: LlamaContext,
  model: LlamaModel,
  sequences: number,
): Promise<SequenceCopyProbe> {
  if (!existsSync(SEQUENCE_COPY_BINARY)) return { ok: false, why: "binding not built (native/sequence-copy/build.sh)" };
  const insights = model.fileInsights;
  if (insights.isHybrid || insights.isRecurrent || (insights.swaSize !== undefined && insights.swaSize > 0))
    return { ok: false, why: "the model's KV cannot be cut at any position (sliding-window or recurrent layers)" };
  try {
    const binding = createRequire(import.meta.url)(SEQUENCE_COPY_BINARY.pathname) as SequenceCopyBinding;
    const internals = context as unknown as ContextInternals;
    const modelObject = (model as unknown as ModelInternals)._model;
    if (typeof internals._ctx?.getContextSize !== "function" || typeof modelObject !== "object")
      return { ok: false, why: "node-llama-cpp's context object is not the one this binding was written for" };
    const shape = { cells: internals._ctx.getContextSize(), batch: context.batchSize, sequences };
    const library = binding.probe(internals._ctx, modelObject, shape.cells, shape.batch, shape.sequences);
    const acquireLock = await nodeLlamaCppLock();
    return { ok: true, library, copier: new SequenceCopier(binding, internals._ctx, modelObject, shape, acquireLock) };
  } catch (error) {
    return { ok: false, why: error instanceof Error ? error.message : String(error) };
  }
}

/** The lock function of the lifecycle-utils node-llama-cpp itself imports (its locks are per module instance). */
async function nodeLlamaCppLock(): Promise<AcquireLock> {
  const fromNodeLlamaCpp = createRequire(createRequire(import.meta.url).resolve("node-llama-cpp"));
  const module = (await import(pathToFileURL(fromNodeLlamaCpp.resolve("lifecycle-utils")).href)) as {
    acquireLock?: AcquireLock;
  };
  if (typeof module.acquireLock !== "function") throw new Error("lifecycle-utils has no acquireLock");
  return module.acquireLock;
}

export class SequenceCopier {
  constructor(
    private readonly binding: SequenceCopyBinding,
    private readonly context: object,
    private readonly model: object,
    private readonly shape: { cells: number; batch: number; sequences: number },
    private readonly acquireLock: AcquireLock,
  ) {}

  /**
   * Make `target` hold exactly the first `length` tokens of `source` (unchanged). Takes the locks
   * node-llama-cpp takes to load a state (both sequences' evaluation locks, then the context's), so
   * no decode runs meanwhile; the copy is complete when it resolves.
   */
  async copy(source: LlamaContextSequence, target: LlamaContextSequence, length: number): Promise<void> {
    const src = source as unknown as SequenceInternals;
    const dst = target as unknown as SequenceInternals;
    const tokens = source.contextTokens.slice(0, length) as Token[];
    const last = tokens.at(-1);
    if (last === undefined || tokens.length !== length)
      throw new RangeError(`source holds fewer than ${length} tokens`);
    const locks = [
      await this.acquireLock([dst._lock, "evaluate"]),
      await this.acquireLock([src._lock, "evaluate"]),
      await this.acquireLock([this.context, "context"]),
    ];
    try {
      if (dst._loadedTokenPredictions.length > 0 || src._loadedTokenPredictions.length > 0)
        throw new Error("a sequence holds token predictions; the sequence copy does not handle them");
      // Cleared first: if the native copy fails, the target holds nothing (the binding clears it too).
      dst._contextTokens = [];
      dst._nextTokenIndex = 0;
      const { cells, batch, sequences } = this.shape;
      this.binding.copyPrefix(
        this.context,
        this.model,
        cells,
        batch,
        sequences,
        src._sequenceId,
        dst._sequenceId,
        length,
        last,
      );
      dst._contextTokens = tokens;
      dst._nextTokenIndex = length;
    } finally {
      for (const lock of locks.reverse()) lock.dispose();
    }
  }
}
