/**
 * The narrow contract between Frontier and the inference engine.
 * Only files under native/ import node-llama-cpp; everything else sees these types.
 */

/** A vocabulary token id. */
export type Token = number;

export interface EngineOptions {
  /** Path to a GGUF file. It is validated (header + required metadata) before loading. */
  modelPath: string;
  /** KV cells per sequence. */
  contextSize: number;
  /** Number of parallel sequences in the one context. */
  sequences: number;
  /** CPU threads for llama.cpp (default 1: more threads than cores is 50-100x slower). */
  threads: number;
  /** "auto" uses CUDA/Vulkan/Metal when the prebuilt binary for it is installed; false forces CPU. */
  gpu: "auto" | false;
  /** Flash attention (off by default: slower on CPU). */
  flashAttention: boolean;
  /** Logical batch size for prompt evaluation. */
  batchSize: number;
  /**
   * Element type of the KV cache's keys and values (default f16). The quantized types need flash
   * attention and a head size divisible by their block of 32.
   */
  kvCacheType?: KvCacheType;
  /**
   * Control-token texts that end a generation on top of llama.cpp's own end-of-generation set
   * (the chat format's end-of-turn markers, e.g. `<|im_end|>`).
   */
  endOfGenerationTexts?: readonly string[];
  /**
   * Tokenize long texts (tokenizeAsync) on a worker_thread holding only the vocabulary, so they
   * never stall the event loop (default true; false: on the main thread).
   */
  tokenizerThread?: boolean;
  /**
   * How `Engine.copyPrefix` moves KV between sequences (default "auto": llama.cpp's sequence copy
   * when its binding works here, else a state restore).
   */
  prefixCopy?: "auto" | PrefixCopyMethod;
}

/**
 * How one sequence takes another's KV prefix: llama.cpp's sequence copy (`llama_memory_seq_cp`,
 * native/sequence-copy/) or a restore of the source's saved state, cut to the prefix.
 */
export const PREFIX_COPY_METHODS = ["sequence-copy", "state-restore"] as const;
export type PrefixCopyMethod = (typeof PREFIX_COPY_METHODS)[number];

/**
 * The engine's prefix copy. `method` is the way `copyPrefix` prefers: "sequence-copy" when llama.cpp's
 * sequence copy works here, else "state-restore". With "auto" on a CPU build the copy still restores a
 * state when the source holds fewer than `stateRestoreBelow` tokens: the sequence copy moves every cell
 * of the source's sequence, used or not, so for a short source the state is the smaller copy.
 */
export interface PrefixCopyInfo {
  method: PrefixCopyMethod;
  /** Undefined when llama.cpp's sequence copy works here; else why not. */
  sequenceCopyUnavailable: string | undefined;
  /** Sources shorter than this are copied by a state restore (0: never). */
  stateRestoreBelow: number;
}

/** KV cache element types a worker may be configured with (FRONTIER_KV_TYPE). */
export const KV_CACHE_TYPES = ["f16", "q8_0", "q4_0"] as const;
export type KvCacheType = (typeof KV_CACHE_TYPES)[number];

export interface ModelInfo {
  path: string;
  /** Stable identity of the weights (sha256 over the GGUF header, metadata and size). Guards state files. */
  identity: string;
  /** `general.name` or the file name. */
  name: string;
  architecture: string;
  /** Training context length from the GGUF metadata. */
  trainContextSize: number;
  vocabSize: number;
  /** `tokenizer.chat_template` when present (used to pick a chat format). */
  chatTemplate: string | undefined;
  bosToken: Token | undefined;
  eosToken: Token | undefined;
  /** Every end-of-generation token (eos, eot, the chat format's end-of-turn markers, ...). */
  endOfGenerationTokens: readonly Token[];
  /** The llama.cpp binary the engine loaded. */
  build: EngineBuild;
}

/** Which llama.cpp binary node-llama-cpp loaded: its portable prebuilt one or a local `npm run build:engine` one. */
export interface EngineBuild {
  origin: "prebuilt" | "local";
  /** "cpu", or the GPU backend the binary uses ("cuda", "vulkan", "metal"). */
  backend: string;
  /** The llama.cpp release the binary was built from. */
  llamaCppRelease: string;
  /** CPU features compiled in (from llama.cpp's system info), e.g. "AVX2 FMA F16C". */
  cpuFeatures: string;
}

/** One line for logs and reports, e.g. "local CPU build (llama.cpp b7000; AVX2 FMA)". */
export function describeEngineBuild(build: EngineBuild): string {
  const backend = build.backend === "cpu" ? "CPU" : build.backend.toUpperCase();
  const origin = build.origin === "local" ? "local" : "prebuilt";
  return `${origin} ${backend} build (llama.cpp ${build.llamaCppRelease}; ${build.cpuFeatures || "no CPU features reported"})`;
}

export interface SampleOptions {
  /** 0 = greedy. */
  temperature: number;
  topP: number;
  topK: number;
  minP: number;
  seed: number | undefined;
  /** A GBNF grammar that constrains every sampled token (root rule `root`). */
  grammar: string | undefined;
}

/** Greedy decoding: always the most likely token, no grammar (spread and override per call). */
export const GREEDY: SampleOptions = Object.freeze({
  temperature: 0,
  topP: 1,
  topK: 0,
  minP: 0,
  seed: undefined,
  grammar: undefined,
});

export interface EngineStats {
  sequencesTotal: number;
  sequencesFree: number;
  /** Tokens whose KV the live sequences hold (the KV cells in use). */
  tokensHeld: number;
}

export interface Engine {
  readonly model: ModelInfo;
  readonly options: Readonly<EngineOptions>;
  /**
   * Text to tokens. `special: false` never produces control tokens from text that spells them. No BOS added.
   * Throws TokenizerInputError for text the model's tokenizer cannot take (tokenizer-guard.ts).
   */
  tokenize(text: string, options: { special: boolean }): Token[];
  /**
   * The same tokens as `tokenize`, without stalling the event loop: long texts are tokenized on the
   * engine's tokenizer thread (one at a time, in order), short ones on the main thread.
   */
  tokenizeAsync(text: string, options: { special: boolean }): Promise<Token[]>;
  /** Tokens to text; control tokens render as their text. May end in a partial UTF-8 sequence (U+FFFD). */
  detokenize(tokens: readonly Token[]): string;
  /** The most bytes one non-control token spells: a text of N bytes is at least N / maxTokenBytes tokens. */
  readonly maxTokenBytes: number;
  /** Raw bytes of one token (byte tokens give their byte). */
  tokenBytes(token: Token): Uint8Array;
  isEndOfGeneration(token: Token): boolean;
  /** Take a free sequence; throws NoFreeSequenceError when none is free. */
  acquireSequence(): Promise<EngineSequence>;
  readonly prefixCopy: PrefixCopyInfo;
  /**
   * Make `target` hold exactly the first `length` tokens of `source`'s KV (`source` is unchanged),
   * at a small fraction of the cost of prefilling them; returns the method used (default: as
   * `prefixCopy` says). Both sequences must be idle: an operation in flight on either makes it
   * throw. On failure `target` holds nothing.
   */
  copyPrefix(
    source: EngineSequence,
    target: EngineSequence,
    length: number,
    method?: PrefixCopyMethod,
  ): Promise<PrefixCopyMethod>;
  stats(): EngineStats;
  dispose(): Promise<void>;
}

/** `EngineSequence.generate`'s options. */
export type GenerateOptions = SampleOptions & {
  maxTokens: number;
  signal?: AbortSignal;
  promptEnd?: readonly Token[];
};

export interface EngineSequence {
  readonly index: number;
  /** The tokens whose KV this sequence holds, in order. */
  readonly tokens: readonly Token[];
  /** Drop KV from position `length` on (keep tokens[0..length)). */
  truncate(length: number): Promise<void>;
  /**
   * Append `tokens` to the KV (prefill). Calls `onProgress` between batches so callers can
   * emit keep-alives and honour cancellation (throw from it / abort the signal to stop).
   */
  append(
    tokens: readonly Token[],
    options?: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void },
  ): Promise<void>;
  /**
   * Sample up to `maxTokens` tokens after the current frontier, each appended to the KV before the
   * next is sampled; a yielded token's decode runs while the consumer handles it. The consumer may
   * stop early (break / signal); the sequence's `tokens` then hold exactly the tokens that were
   * evaluated: every token it received (the last one's decode had started and is waited for).
   * `promptEnd`: the prompt's last tokens, not yet in the KV; they are evaluated in the decode that
   * yields the first sampled token. Without it the sequence's last token is re-evaluated for fresh
   * logits (llama.cpp keeps none across appends), which costs one extra decode per turn; either way
   * the sequence needs at least one token before sampling.
   * An end-of-generation token is yielded last and is not evaluated; generation also ends when the
   * sequence is full. An aborted `signal` makes the generator throw the signal's reason; an invalid
   * `grammar` makes it throw InvalidGrammarError. Operations on one sequence must not overlap.
   */
  generate(options: GenerateOptions): AsyncGenerator<Token, void, void>;
  /** Persist this sequence's KV to a file. */
  saveState(path: string): Promise<{ bytes: number }>;
  /** Replace this sequence's KV with a saved state holding exactly `tokens`. */
  loadState(path: string, tokens: readonly Token[]): Promise<void>;
  /** Free the sequence (its KV is cleared). Using it afterwards throws DisposedError. */
  dispose(): void;
}

export class NoFreeSequenceError extends Error {
  override readonly name = "NoFreeSequenceError";
}

export class DisposedError extends Error {
  override readonly name = "DisposedError";
}

export class InvalidModelError extends Error {
  override readonly name = "InvalidModelError";
}

/** A GBNF grammar in SampleOptions does not parse (llama.cpp logs the parse position). */
/** llama.cpp refused a validated model or its context; the message carries llama.cpp's own reason. */
export class ModelLoadError extends Error {
  override readonly name = "ModelLoadError";
}

export class InvalidGrammarError extends Error {
  override readonly name = "InvalidGrammarError";
}

/**
 * The sampler could not pick a token (llama.cpp's grammar refused the one it chose, e.g. a grammar
 * that needs a character no token spells). The generation ends with this error; the sequence keeps
 * what it evaluated and the worker goes on.
 */
export class SamplingError extends Error {
  override readonly name = "SamplingError";
}

/** Text the model's tokenizer cannot take safely (e.g. a run of punctuation too long for its pre-tokenizer). */
export class TokenizerInputError extends Error {
  override readonly name = "TokenizerInputError";
}
