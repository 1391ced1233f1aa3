/**
 * Text to tokens exactly as the engine does it, over any llama.cpp tokenize function: the run
 * guard (tokenizer-guard.ts), then control-token parsing for template text or plain-text
 * tokenization that never yields a control token (plain-text-tokens.ts). The engine's main thread
 * and its tokenizer thread (tokenizer-thread.ts) each build one, so both give the same tokens.
 */
import type { Token } from "../engine-types.ts";
import { PlainTextTokenizer } from "./plain-text-tokens.ts";
import { checkTokenizerInput, type RunClass, recursiveRunClasses } from "./tokenizer-guard.ts";

/** What a text tokenizer needs of the GGUF (structured-cloneable: it is sent to the thread). */
export interface VocabularySummary {
  tokens: readonly string[];
  tokenTypes: readonly number[] | undefined;
  tokenizerPre: string | undefined;
}

export type LlamaTokenize = (text: string, special: boolean) => readonly number[] | Uint32Array;

export class TextTokenizer {
  readonly #tokenize: LlamaTokenize;
  readonly #plain: PlainTextTokenizer;
  /** Runs of these classes recurse in this model's pre-tokenizer. */
  readonly #boundedRuns: readonly RunClass[];

  constructor(tokenize: LlamaTokenize, vocabulary: VocabularySummary) {
    this.#tokenize = tokenize;
    this.#plain = new PlainTextTokenizer(
      (text) => Array.from(tokenize(text, false)),
      vocabulary.tokens,
      vocabulary.tokenTypes,
    );
    this.#boundedRuns = recursiveRunClasses(vocabulary.tokenizerPre);
  }

  /** Throws TokenizerInputError for a run the pre-tokenizer cannot take. */
  tokenize(text: string, special: boolean): Token[] {
    checkTokenizerInput(text, this.#boundedRuns);
    return special ? Array.from(this.#tokenize(text, true)) : this.#plain.tokenize(text);
  }
}
