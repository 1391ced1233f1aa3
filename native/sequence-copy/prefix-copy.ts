/**
 * `Engine.copyPrefix`'s two ways: llama.cpp's sequence copy (sequence-copier.ts), or the source's
 * state saved to memory-backed scratch, loaded into the target and cut to the prefix.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LlamaContext, LlamaModel } from "node-llama-cpp";
import type { EngineSequenceImpl } from "../engine-sequence.ts";
import { type EngineOptions, ModelLoadError, type PrefixCopyInfo, type PrefixCopyMethod } from "../engine-types.ts";
import { probeSequenceCopy, type SequenceCopier } from "./sequence-copier.ts";

const SCRATCH_DIR = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

export async function copyPrefixBetween(
  source: EngineSequenceImpl,
  target: EngineSequenceImpl,
  length: number,
  method: PrefixCopyMethod,
  copier: SequenceCopier | undefined,
): Promise<void> {
  if (!Number.isInteger(length) || length < 1 || length > source.tokens.length)
    throw new RangeError(`prefix length ${length} is outside the source's ${source.tokens.length} tokens`);
  if (source === target) throw new RangeError("a sequence cannot copy its own prefix");
  switch (method) {
    case "sequence-copy": {
      if (!copier) throw new Error("llama.cpp's sequence copy is not available in this engine");
      await target.withNative("copyPrefix", (dst) =>
        source.withNative("copyPrefix source", (src) => copier.copy(src, dst, length)),
      );
      return;
    }
    case "state-restore": {
      const path = join(SCRATCH_DIR, `frontier-prefix-${randomUUID()}.state`);
      try {
        const tokens = [...source.tokens];
        await source.saveState(path);
        await target.loadState(path, tokens);
        await target.truncate(length);
      } catch (error) {
        if (!target.isDisposed) await target.truncate(0).catch(() => undefined);
        throw error;
      } finally {
        await rm(path, { force: true });
      }
      return;
    }
  }
}

/**
 * How much of a sequence's cells a source must fill before the sequence copy beats a state restore
 * on a CPU build (one in 32): measured with `npm run bench -- --only prefix-copy` and by hand at 65,536
 * cells (docs/bench/history/issue-45-prefix-copy.md). On a GPU the sequence copy is a device copy
 * and always the faster.
 */
const SEQUENCE_COPY_MIN_FILL = 32;

/** The prefix copy this engine uses: llama.cpp's sequence copy when its binding works here (and is not turned off). */
export async function prefixCopyOf(
  options: EngineOptions,
  context: LlamaContext,
  model: LlamaModel,
  backend: string,
): Promise<{ prefixCopy: PrefixCopyInfo; copier: SequenceCopier | undefined }> {
  const wanted = options.prefixCopy ?? "auto";
  const probe =
    wanted === "state-restore"
      ? ({ ok: false, why: "turned off (prefixCopy: state-restore)" } as const)
      : await probeSequenceCopy(context, model, options.sequences);
  if (!probe.ok && wanted === "sequence-copy")
    throw new ModelLoadError(`llama.cpp's sequence copy was asked for but is unavailable: ${probe.why}`);
  if (!probe.ok) {
    const prefixCopy = { method: "state-restore", sequenceCopyUnavailable: probe.why, stateRestoreBelow: 0 } as const;
    return { prefixCopy: Object.freeze(prefixCopy), copier: undefined };
  }
  const below = wanted === "auto" && backend === "cpu" ? Math.ceil(options.contextSize / SEQUENCE_COPY_MIN_FILL) : 0;
  const prefixCopy = { method: "sequence-copy", sequenceCopyUnavailable: undefined, stateRestoreBelow: below } as const;
  return { prefixCopy: Object.freeze(prefixCopy), copier: probe.copier };
}
