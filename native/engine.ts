/**
 * The inference engine: one GGUF model and one llama.cpp context with `sequences` parallel KV
 * sequences, through node-llama-cpp. The only module (with its helpers) that imports node-llama-cpp.
 */
import { setImmediate as nextMacrotask } from "node:timers/promises";
import type { Llama, LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel } from "node-llama-cpp";
import { DecodeGate } from "./decode-gate.ts";
import { loadLlamaModel, stateIdentity } from "./engine-load.ts";
import { EngineSequenceImpl, llamaTokens, type SequenceHost } from "./engine-sequence.ts";
import {
  DisposedError,
  type Engine,
  type EngineOptions,
  type EngineSequence,
  type EngineStats,
  type ModelInfo,
  NoFreeSequenceError,
  type PrefixCopyInfo,
  type PrefixCopyMethod,
  type Token,
} from "./engine-types.ts";
import { GrammarCache } from "./grammar-cache.ts";
import { type GgufSummary, validateGguf } from "./model/gguf-validate.ts";
import { guardSampling, type SamplingFailures } from "./sampling-guard.ts";
import { copyPrefixBetween, prefixCopyOf } from "./sequence-copy/prefix-copy.ts";
import type { SequenceCopier } from "./sequence-copy/sequence-copier.ts";
import { TextTokenizer } from "./tokenizer/text-tokenizer.ts";
import { TokenBytes } from "./tokenizer/token-bytes.ts";
import { TokenizerWorker } from "./tokenizer/tokenizer-worker.ts";

const TOKEN_TYPE_CONTROL = 3;

/**
 * Texts of at least this many characters are tokenized on the tokenizer thread (tokenizeAsync).
 * Shorter ones take well under a millisecond on the main thread, less than the round trip.
 */
export const THREAD_TOKENIZE_MIN_CHARS = 16_384;

function checkOptions(o: EngineOptions): void {
  const positive = (name: keyof EngineOptions, v: number): void => {
    if (!Number.isInteger(v) || v < 1)
      throw new RangeError(`EngineOptions.${name} must be a positive integer, got ${v}`);
  };
  positive("contextSize", o.contextSize);
  positive("sequences", o.sequences);
  positive("threads", o.threads);
  positive("batchSize", o.batchSize);
}

/** llama.cpp's end-of-generation set plus the control tokens the chat format names. */
function endOfGenerationTokens(model: LlamaModel, summary: GgufSummary, formatTexts: readonly string[]): Token[] {
  const extra = new Set(formatTexts);
  const out = new Set<Token>();
  for (const t of [model.tokens.eos, model.tokens.eot]) if (t !== null) out.add(t);
  const types = summary.tokenTypes;
  for (let t = 0; t < summary.vocabSize; t++) {
    const [token] = llamaTokens([t]);
    const control = types === undefined ? model.isSpecialToken(token) : types[t] === TOKEN_TYPE_CONTROL;
    if (!control) continue;
    if (model.isEogToken(token) || extra.has(summary.tokens[t] ?? "")) out.add(t);
  }
  return [...out].sort((a, b) => a - b);
}

function longestTokenBytes(bytes: TokenBytes, summary: GgufSummary): number {
  let longest = 1;
  for (let t = 0; t < summary.vocabSize; t++) {
    if (summary.tokenTypes?.[t] === TOKEN_TYPE_CONTROL) continue;
    longest = Math.max(longest, bytes.get(t).length);
  }
  return longest;
}

class EngineImpl implements Engine, SequenceHost {
  readonly capacity: number;
  readonly batchSize: number;
  readonly vocabSize: number;
  readonly maxTokenBytes: number;
  private readonly eog: ReadonlySet<Token>;
  private readonly bytes: TokenBytes;
  readonly samplingFailures: SamplingFailures;
  readonly decodeGate = new DecodeGate();
  private readonly text: TextTokenizer;
  private readonly grammars: GrammarCache;
  private readonly live = new Set<EngineSequenceImpl>();
  /** Sequences being freed: their native slot returns once node-llama-cpp reclaims it. */
  private readonly freeing = new Map<EngineSequenceImpl, Promise<void>>();
  private readonly backgroundErrors: unknown[] = [];
  private disposed = false;

  constructor(
    readonly model: ModelInfo,
    readonly options: Readonly<EngineOptions>,
    private readonly llama: Llama,
    readonly llamaModel: LlamaModel,
    private readonly context: LlamaContext,
    summary: GgufSummary,
    private readonly thread: TokenizerWorker | undefined,
    readonly prefixCopy: PrefixCopyInfo,
    private readonly copier: SequenceCopier | undefined,
  ) {
    this.capacity = context.contextSize - 1;
    this.batchSize = context.batchSize;
    this.vocabSize = summary.vocabSize;
    this.eog = new Set(model.endOfGenerationTokens);
    this.grammars = new GrammarCache(llama);
    this.samplingFailures = guardSampling(context);
    this.text = new TextTokenizer((text, special) => llamaModel.tokenize(text, special), summary);
    this.bytes = new TokenBytes({
      tokenizerModel: summary.tokenizerModel,
      tokens: summary.tokens,
      tokenTypes: summary.tokenTypes,
      fallback: (t) => llamaModel.detokenize(llamaTokens([t]), true),
    });
    this.maxTokenBytes = longestTokenBytes(this.bytes, summary);
  }

  tokenize(text: string, options: { special: boolean }): Token[] {
    this.ensureAlive();
    return this.text.tokenize(text, options.special);
  }

  async tokenizeAsync(text: string, options: { special: boolean }): Promise<Token[]> {
    this.ensureAlive();
    if (this.thread === undefined || text.length < THREAD_TOKENIZE_MIN_CHARS) return this.tokenize(text, options);
    return this.thread.tokenize(text, options.special);
  }

  detokenize(tokens: readonly Token[]): string {
    this.ensureAlive();
    return this.llamaModel.detokenize(llamaTokens(tokens), true);
  }

  tokenBytes(token: Token): Uint8Array {
    return this.bytes.get(token);
  }

  isEndOfGeneration(token: Token): boolean {
    return this.eog.has(token);
  }

  async acquireSequence(): Promise<EngineSequence> {
    this.ensureAlive();
    // A sequence being freed becomes available once node-llama-cpp reclaims it (under the context
    // lock: other sequences pause their decodes meanwhile, decode-gate.ts).
    while (this.context.sequencesLeft === 0 && this.freeing.size > 0) {
      await this.decodeGate.hold(() => Promise.race(this.freeing.values()));
      this.ensureAlive();
    }
    let inner: LlamaContextSequence;
    try {
      inner = this.takeSequence();
    } catch (err) {
      if (err instanceof NoFreeSequenceError) throw err;
      // Right after a sequence is disposed, getSequence() can throw until the next macrotask.
      await nextMacrotask();
      this.ensureAlive();
      inner = this.takeSequence();
    }
    const seq = new EngineSequenceImpl(this.freeIndex(), inner, this);
    this.live.add(seq);
    return seq;
  }

  async copyPrefix(
    source: EngineSequence,
    target: EngineSequence,
    length: number,
    method?: PrefixCopyMethod,
  ): Promise<PrefixCopyMethod> {
    this.ensureAlive();
    const [from, to] = [this.own(source), this.own(target)];
    const { method: preferred, stateRestoreBelow } = this.prefixCopy;
    if (method === undefined) method = from.tokens.length < stateRestoreBelow ? "state-restore" : preferred;
    await copyPrefixBetween(from, to, length, method, this.copier);
    return method;
  }

  stats(): EngineStats {
    return {
      sequencesTotal: this.options.sequences,
      sequencesFree: this.disposed ? 0 : this.options.sequences - this.live.size,
      tokensHeld: [...this.live].reduce((sum, seq) => sum + seq.tokens.length, 0),
    };
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const seq of this.live) seq.dispose();
    await Promise.all(this.freeing.values());
    this.grammars.clear();
    await this.thread?.dispose();
    await this.context.dispose();
    await this.llamaModel.dispose();
    await this.llama.dispose();
    if (this.backgroundErrors.length > 0) throw new AggregateError(this.backgroundErrors, "freeing sequences failed");
  }

  grammar(text: string): Promise<LlamaGrammar> {
    return this.grammars.get(text);
  }

  released(seq: EngineSequenceImpl, freed: Promise<void>): void {
    this.live.delete(seq);
    const done = freed.then(
      () => void this.freeing.delete(seq),
      (err: unknown) => {
        this.freeing.delete(seq);
        this.backgroundErrors.push(err);
        process.emitWarning(`freeing engine sequence ${seq.index} failed: ${String(err)}`);
      },
    );
    this.freeing.set(seq, done);
  }

  private takeSequence(): LlamaContextSequence {
    if (this.context.sequencesLeft === 0) {
      throw new NoFreeSequenceError(`all ${this.options.sequences} sequences are in use`);
    }
    return this.context.getSequence({
      contextShift: {
        strategy: () => {
          throw new Error("sequence is full (context shifting is disabled so that `tokens` stays exact)");
        },
      },
    });
  }

  private freeIndex(): number {
    const taken = new Set<number>();
    for (const s of this.live) taken.add(s.index);
    let i = 0;
    while (taken.has(i)) i++;
    return i;
  }

  private own(sequence: EngineSequence): EngineSequenceImpl {
    if (!(sequence instanceof EngineSequenceImpl) || !this.live.has(sequence))
      throw new DisposedError(`sequence ${sequence.index} is not a live sequence of this engine`);
    return sequence;
  }

  private ensureAlive(): void {
    if (this.disposed) throw new DisposedError("engine is disposed");
  }
}

/** The GGUF's metadata that tells its chat format, read without loading the weights. */
export interface ModelFormatInfo
  extends Pick<ModelInfo, "name" | "architecture" | "chatTemplate" | "trainContextSize"> {
  /** `tokenizer.ggml.pre`, when present. */
  tokenizerPre: string | undefined;
  /** Tokens typed control (3) or user-defined (4) in `tokenizer.ggml.token_type`. */
  specialTokens: string[];
}

export async function inspectModel(path: string): Promise<ModelFormatInfo> {
  const summary = await validateGguf(path);
  const types = summary.tokenTypes;
  const specialTokens = types === undefined ? [] : summary.tokens.filter((_, i) => types[i] === 3 || types[i] === 4);
  return {
    name: summary.name,
    architecture: summary.architecture,
    chatTemplate: summary.chatTemplate,
    trainContextSize: summary.trainContextSize,
    tokenizerPre: summary.tokenizerPre,
    specialTokens,
  };
}

/**
 * Validate the GGUF, load it and create one context of `sequences` x `contextSize` KV cells.
 * Throws InvalidModelError for a file llama.cpp must not see.
 */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  checkOptions(options);
  const summary = await validateGguf(options.modelPath);
  const { llama, model, context, build } = await loadLlamaModel(options, summary);
  let thread: TokenizerWorker | undefined;
  try {
    const info: ModelInfo = {
      path: options.modelPath,
      identity: stateIdentity(summary.identity, options.kvCacheType),
      name: summary.name,
      architecture: summary.architecture,
      trainContextSize: summary.trainContextSize,
      vocabSize: summary.vocabSize,
      chatTemplate: summary.chatTemplate,
      bosToken: model.tokens.bos ?? undefined,
      eosToken: model.tokens.eos ?? undefined,
      endOfGenerationTokens: Object.freeze(endOfGenerationTokens(model, summary, options.endOfGenerationTexts ?? [])),
      build,
    };
    const { prefixCopy, copier } = await prefixCopyOf(options, context, model, build.backend);
    if (options.tokenizerThread !== false) {
      const { tokens, tokenTypes, tokenizerPre } = summary;
      thread = new TokenizerWorker(options.modelPath, { tokens, tokenTypes, tokenizerPre });
      await thread.ready();
    }
    const frozen = Object.freeze({ ...options });
    return new EngineImpl(Object.freeze(info), frozen, llama, model, context, summary, thread, prefixCopy, copier);
  } catch (err) {
    await thread?.dispose();
    await context.dispose();
    await model.dispose();
    await llama.dispose();
    throw err;
  }
}
