/**
 * One KV sequence of the engine's context, wrapping a node-llama-cpp LlamaContextSequence.
 * `tokens` always mirrors exactly what the KV holds; operations on one sequence never overlap.
 */
import {
  type LlamaContextSequence,
  type LlamaGrammar,
  LlamaGrammarEvaluationState,
  type LlamaModel,
  type Token as LlamaToken,
} from "node-llama-cpp";
import type { DecodeGate } from "./decode-gate.ts";
import { DisposedError, type EngineSequence, type GenerateOptions, SamplingError, type Token } from "./engine-types.ts";
import type { SamplingFailures } from "./sampling-guard.ts";

/** What a sequence needs from its engine. */
export interface SequenceHost {
  readonly llamaModel: LlamaModel;
  /** Most tokens one sequence can hold (node-llama-cpp keeps one cell free: contextSize - 1). */
  readonly capacity: number;
  readonly batchSize: number;
  readonly vocabSize: number;
  isEndOfGeneration(token: Token): boolean;
  grammar(text: string): Promise<LlamaGrammar>;
  /** Native sampling failures the context's sampling guard caught (sampling-guard.ts). */
  readonly samplingFailures: SamplingFailures;
  /** Closed while a whole-context operation (state save/load, reclaim) waits for the context. */
  readonly decodeGate: DecodeGate;
  /** Called once by `dispose()` with the promise that frees the native sequence. */
  released(seq: EngineSequenceImpl, freed: Promise<void>): void;
}

/**
 * A temperature this close to 0 is greedy: dividing logits by a denormal (2.5e-43 came from the fuzz
 * tier) makes them infinite, the sampler then picks a token the grammar forbids, fails to accept it,
 * and node-llama-cpp leaves that rejection unhandled, which killed the worker.
 */
export const MIN_TEMPERATURE = 1e-3;

function samplingTemperature(temperature: number): number {
  return Number.isFinite(temperature) && temperature >= MIN_TEMPERATURE ? temperature : 0;
}

/** node-llama-cpp brands its token ids; ours are plain numbers (checked against the vocabulary). */
export function llamaTokens(tokens: readonly Token[]): LlamaToken[] {
  return tokens.slice() as LlamaToken[];
}

export class EngineSequenceImpl implements EngineSequence {
  private mirror: readonly Token[] = [];
  private busy: string | undefined;
  /** Settles when the native call now running (if any) settles. */
  private inFlight: Promise<void> | undefined;
  private disposed = false;

  constructor(
    readonly index: number,
    private readonly inner: LlamaContextSequence,
    private readonly host: SequenceHost,
  ) {}

  /** The KV's tokens (a snapshot: the array is replaced, never mutated). Empty after dispose. */
  get tokens(): readonly Token[] {
    return this.mirror;
  }

  async truncate(length: number): Promise<void> {
    if (!Number.isInteger(length) || length < 0)
      throw new RangeError(`truncate length must be a non-negative integer, got ${length}`);
    await this.run("truncate", async () => {
      if (length >= this.mirror.length) return;
      if (length === 0) await this.native(() => this.inner.clearHistory());
      else
        await this.native(() =>
          this.inner.eraseContextTokenRanges([{ start: length, end: this.inner.nextTokenIndex }]),
        );
    });
  }

  async append(
    tokens: readonly Token[],
    options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {},
  ): Promise<void> {
    const { signal, onProgress } = options;
    await this.run("append", async () => {
      this.checkTokens(tokens);
      if (this.mirror.length + tokens.length > this.host.capacity) {
        throw new RangeError(
          `append of ${tokens.length} tokens to ${this.mirror.length} exceeds the sequence capacity ${this.host.capacity}`,
        );
      }
      const chunk = this.host.batchSize;
      for (let done = 0; done < tokens.length; ) {
        signal?.throwIfAborted();
        const part = tokens.slice(done, done + chunk);
        await this.native(() => this.inner.evaluateWithoutGeneratingNewTokens(llamaTokens(part)));
        done += part.length;
        this.sync();
        onProgress?.(done, tokens.length);
      }
    });
  }

  /**
   * Sample after the frontier. The first decode evaluates `promptEnd` when given, else the
   * sequence's last token again (llama.cpp keeps no logits across appends, truncation or state
   * loads). Each yielded token's own decode starts as it is yielded (pipelined with the consumer),
   * except the last one: an end-of-generation token, the `maxTokens`-th, or one that would not fit.
   * A consumer that stops early waits for the decode of the token it stopped at. Aborting `signal`
   * throws its reason. `tokens` afterwards holds exactly the evaluated tokens.
   */
  async *generate(options: GenerateOptions): AsyncGenerator<Token, void, void> {
    const { maxTokens, signal } = options;
    const promptEnd = options.promptEnd ?? [];
    if (!Number.isInteger(maxTokens) || maxTokens < 0)
      throw new RangeError(`maxTokens must be a non-negative integer, got ${maxTokens}`);
    this.begin("generate");
    try {
      signal?.throwIfAborted();
      this.checkPromptEnd(promptEnd);
      if (maxTokens === 0) {
        if (promptEnd.length > 0) {
          await this.native(() => this.inner.evaluateWithoutGeneratingNewTokens(llamaTokens(promptEnd)));
          this.sync();
        }
        return;
      }
      // The first decode's input: the prompt's end, or the frontier token evaluated again.
      const reEvaluated = promptEnd.length === 0 ? this.mirror.at(-1) : undefined;
      const firstInput = reEvaluated === undefined ? promptEnd : [reEvaluated];
      if (firstInput.length === 0)
        throw new Error("generate needs at least one token in the sequence to continue from");
      const start = this.mirror.length - (reEvaluated === undefined ? 0 : 1);
      const grammarEvaluationState = await this.grammarState(options.grammar);
      if (reEvaluated !== undefined)
        await this.native(() => this.inner.eraseContextTokenRanges([{ start, end: start + 1 }]));
      const iter = this.inner.evaluate(llamaTokens(firstInput), {
        temperature: samplingTemperature(options.temperature),
        topP: options.topP,
        topK: options.topK,
        minP: options.minP,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
        ...(grammarEvaluationState === undefined ? {} : { grammarEvaluationState }),
        yieldEogToken: true,
      });
      /** The decode now running: it evaluates the token last yielded and samples the next. */
      let ahead: Promise<IteratorResult<LlamaToken>> | undefined = this.step(iter);
      try {
        for (let produced = 0; ahead !== undefined; ) {
          const next = await ahead;
          ahead = undefined;
          if (this.disposed) throw new DisposedError(`sequence ${this.index} was disposed`);
          this.sync();
          if (next.done === true) return;
          signal?.throwIfAborted();
          produced++;
          const token = next.value;
          const last =
            produced >= maxTokens || this.host.isEndOfGeneration(token) || this.mirror.length >= this.host.capacity;
          // Evaluate the token while the consumer handles it: its work (text, parsing, the stream)
          // overlaps the next decode instead of adding to it.
          // While a whole-context operation waits (decode-gate.ts), the next decode waits for it.
          if (!last) ahead = this.host.decodeGate.after(() => this.step(iter));
          yield token;
          signal?.throwIfAborted();
        }
      } finally {
        // A consumer that stopped early has its last token evaluated already: that decode finishes.
        if (ahead !== undefined) await ahead.catch(() => undefined);
        await iter.return(); // only releases the sampler: the iterator is suspended, no decode runs
        // If the frontier token was erased and never evaluated again (the first decode failed), put
        // it back. A `promptEnd` the first decode did not evaluate is simply not in `tokens`.
        if (!this.disposed && reEvaluated !== undefined && this.inner.nextTokenIndex <= start) {
          await this.native(() => this.inner.evaluateWithoutGeneratingNewTokens(llamaTokens([reEvaluated])));
        }
        this.sync();
      }
    } catch (err) {
      throw this.translate(err);
    } finally {
      this.busy = undefined;
    }
  }

  private checkPromptEnd(promptEnd: readonly Token[]): void {
    this.checkTokens(promptEnd);
    if (this.mirror.length + promptEnd.length > this.host.capacity) {
      throw new RangeError(
        `generate's ${promptEnd.length} prompt tokens after ${this.mirror.length} exceed the sequence capacity ${this.host.capacity}`,
      );
    }
  }

  private async grammarState(grammar: GenerateOptions["grammar"]): Promise<LlamaGrammarEvaluationState | undefined> {
    if (grammar === undefined) return undefined;
    return new LlamaGrammarEvaluationState({ model: this.host.llamaModel, grammar: await this.host.grammar(grammar) });
  }

  async saveState(path: string): Promise<{ bytes: number }> {
    return this.run("saveState", async () => {
      const { fileSize } = await this.host.decodeGate.hold(() => this.native(() => this.inner.saveStateToFile(path)));
      return { bytes: fileSize };
    });
  }

  async loadState(path: string, tokens: readonly Token[]): Promise<void> {
    await this.run("loadState", async () => {
      this.checkTokens(tokens);
      if (tokens.length > this.host.capacity)
        throw new RangeError(`state of ${tokens.length} tokens exceeds the sequence capacity ${this.host.capacity}`);
      try {
        await this.host.decodeGate.hold(() =>
          this.native(() => this.inner.loadStateFromFile(path, { acceptRisk: true })),
        );
      } catch (err) {
        if (err instanceof DisposedError) throw err;
        // node-llama-cpp blames the context size for every failure, including "n_stream mismatch".
        const why = err instanceof Error ? err.message : String(err);
        throw new Error(
          `loading state file ${path} failed; it must come from the same model and a context with the same \`sequences\` count (${why})`,
          { cause: err },
        );
      }
      const loaded = this.inner.contextTokens;
      if (loaded.length !== tokens.length || loaded.some((t, i) => t !== tokens[i])) {
        await this.native(() => this.inner.clearHistory());
        throw new Error(
          `state file ${path} holds ${loaded.length} tokens that differ from the ${tokens.length} expected; the sequence was cleared`,
        );
      }
    });
  }

  /**
   * Free the sequence; idempotent. A native call in flight (one decode batch) finishes first, then
   * the native sequence is released (the engine tracks completion); the interrupted operation
   * rejects with DisposedError. Disposing mid-generation is safe, unlike node-llama-cpp's own
   * dispose, which can fail a queued decode with an unhandled "Eval has failed".
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.mirror = [];
    const settled = this.inFlight ?? Promise.resolve();
    this.host.released(
      this,
      settled.then(() => this.inner.dispose()),
    );
  }

  /** One evaluation step; a native sampling failure during it becomes this generation's SamplingError. */
  private async step<T>(iter: AsyncGenerator<T>): Promise<IteratorResult<T>> {
    const failures = this.host.samplingFailures;
    const before = failures.count;
    try {
      return await this.native(() => iter.next());
    } catch (err) {
      if (failures.count === before || err instanceof DisposedError) throw err;
      const reason = failures.last instanceof Error ? failures.last.message : String(failures.last);
      throw new SamplingError(`sampling failed: ${reason}`, { cause: err });
    }
  }

  /**
   * Run `body` on the native sequence as one operation of this sequence, with the decode gate held
   * (whole-context work, e.g. a sequence copy); `tokens` mirrors the native sequence afterwards.
   */
  async withNative<T>(op: string, body: (inner: LlamaContextSequence) => Promise<T>): Promise<T> {
    return this.run(op, () => this.host.decodeGate.hold(() => this.native(() => body(this.inner))));
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Run one native call, refusing to start it once disposed and recording it as in flight. */
  private async native<T>(call: () => Promise<T>): Promise<T> {
    if (this.disposed) throw new DisposedError(`sequence ${this.index} was disposed`);
    const pending = call();
    const settled = pending.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight = settled;
    try {
      return await pending;
    } finally {
      if (this.inFlight === settled) this.inFlight = undefined;
    }
  }

  private begin(op: string): void {
    if (this.disposed) throw new DisposedError(`sequence ${this.index} is disposed`);
    if (this.busy !== undefined)
      throw new Error(`sequence ${this.index} is busy (${this.busy}); operations on one sequence must not overlap`);
    this.busy = op;
  }

  private async run<T>(op: string, body: () => Promise<T>): Promise<T> {
    this.begin(op);
    try {
      return await body();
    } catch (err) {
      throw this.translate(err);
    } finally {
      if (!this.disposed) this.sync();
      this.busy = undefined;
    }
  }

  private sync(): void {
    if (!this.disposed) this.mirror = this.inner.contextTokens;
  }

  private translate(err: unknown): unknown {
    if (err instanceof DisposedError || !this.disposed) return err;
    return new DisposedError(`sequence ${this.index} was disposed during the operation`, { cause: err });
  }

  private checkTokens(tokens: readonly Token[]): void {
    for (const t of tokens) {
      if (!Number.isInteger(t) || t < 0 || t >= this.host.vocabSize)
        throw new RangeError(`token ${t} is outside the vocabulary (0-${this.host.vocabSize - 1})`);
    }
  }
}
