/**
 * The main-thread side of the engine's tokenizer thread: posts long texts to it and resolves each
 * with its tokens, in order. A thread that exits fails what it held and is started again on the
 * next text; its tokens equal the main thread's (same vocabulary, same TextTokenizer).
 */
import { Worker } from "node:worker_threads";
import { type Token, TokenizerInputError } from "../engine-types.ts";
import type { VocabularySummary } from "./text-tokenizer.ts";
import type { ThreadReply, ThreadRequest, ThreadStart } from "./tokenizer-protocol.ts";

/** llama.cpp's regex fallback recurses per character: give the thread the main thread's 8 MB stack. */
const THREAD_STACK_MB = 8;

interface Pending {
  resolve: (tokens: Token[]) => void;
  reject: (error: Error) => void;
}

/**
 * The thread's entry is TypeScript: a one-line bootstrap loads it through tsx's API, so it runs the
 * same under the worker's tsx launcher and under vitest.
 */
function threadBootstrap(): string {
  const tsxApi = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./tokenizer-thread.ts", import.meta.url).href;
  return `import(${JSON.stringify(tsxApi)}).then((tsx) => tsx.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}));`;
}

export class TokenizerWorker {
  readonly #start: ThreadStart;
  readonly #pending = new Map<number, Pending>();
  #thread: Promise<Worker> | undefined;
  #nextId = 1;
  #disposed = false;

  constructor(modelPath: string, vocabulary: VocabularySummary) {
    this.#start = { modelPath, vocabulary };
  }

  /** Start the thread and wait until its vocabulary is loaded. */
  async ready(): Promise<void> {
    await this.#worker();
  }

  async tokenize(text: string, special: boolean): Promise<Token[]> {
    const worker = await this.#worker();
    const id = this.#nextId++;
    return new Promise<Token[]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, text, special } satisfies ThreadRequest);
    });
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
    const thread = this.#thread;
    this.#thread = undefined;
    if (thread) await (await thread.catch(() => undefined))?.terminate();
    this.#failAll(new Error("engine is disposed"));
  }

  #worker(): Promise<Worker> {
    if (this.#disposed) return Promise.reject(new Error("engine is disposed"));
    this.#thread ??= this.#spawn();
    return this.#thread;
  }

  #spawn(): Promise<Worker> {
    let self: Promise<Worker> | undefined;
    const worker = new Worker(threadBootstrap(), {
      eval: true,
      workerData: this.#start,
      resourceLimits: { stackSizeMb: THREAD_STACK_MB },
    });
    self = new Promise<Worker>((resolve, reject) => {
      worker.on("message", (reply: ThreadReply) => {
        if (reply.id === 0) {
          worker.unref();
          resolve(worker);
          return;
        }
        const pending = this.#pending.get(reply.id);
        this.#pending.delete(reply.id);
        if (this.#pending.size === 0) worker.unref();
        if (!pending) return;
        if (reply.ok) pending.resolve(Array.from(reply.tokens));
        else if (reply.name === "TokenizerInputError") pending.reject(new TokenizerInputError(reply.message));
        else pending.reject(new Error(`tokenizer thread: ${reply.message}`));
      });
      const lost = (error: Error): void => {
        reject(error);
        if (this.#thread === self) this.#thread = undefined;
        this.#failAll(error);
      };
      worker.on("error", lost);
      worker.on("exit", (code) => lost(new Error(`tokenizer thread exited with code ${code}`)));
    });
    return self;
  }

  #failAll(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(error);
  }
}
