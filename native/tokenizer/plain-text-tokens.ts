/**
 * Plain-text tokenization that never yields a control token. llama.cpp matches USER_DEFINED tokens
 * in text even with special-token parsing off, and at load it retypes some of a GGUF's CONTROL
 * tokens as user-defined (gpt-oss: `<|start|>`, `<|channel|>`, `<|message|>`, `<|constrain|>`,
 * `<|end|>`), so text spelling them would become the real control tokens. Those spellings are found
 * once at load; a text containing one is tokenized in pieces that break each spelling after its
 * first character, so it stays text.
 */
import type { Token } from "../engine-types.ts";

const TOKEN_TYPE_CONTROL = 3;
const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export class PlainTextTokenizer {
  readonly #tokenize: (text: string) => Token[];
  readonly #spellings: RegExp | undefined;

  /**
   * @param tokenize llama.cpp's tokenizer with special-token parsing off.
   * @param tokens the GGUF's token texts; @param tokenTypes their GGUF types.
   */
  constructor(
    tokenize: (text: string) => Token[],
    tokens: readonly string[],
    tokenTypes: readonly number[] | undefined,
  ) {
    this.#tokenize = tokenize;
    const leaking: string[] = [];
    tokenTypes?.forEach((type, id) => {
      const text = tokens[id];
      if (type !== TOKEN_TYPE_CONTROL || text === undefined || text.length < 2) return;
      const ids = tokenize(text);
      if (ids.length === 1 && ids[0] === id) leaking.push(text);
    });
    leaking.sort((a, b) => b.length - a.length);
    this.#spellings = leaking.length === 0 ? undefined : new RegExp(leaking.map(escapeRegExp).join("|"), "g");
  }

  /** The control spellings llama.cpp would match in plain text (empty for most models). */
  get leakingSpellings(): number {
    return this.#spellings === undefined ? 0 : this.#spellings.source.split("|").length;
  }

  tokenize(text: string): Token[] {
    const pattern = this.#spellings;
    if (pattern === undefined) return this.#tokenize(text);
    const out: Token[] = [];
    let rest = text;
    for (;;) {
      pattern.lastIndex = 0;
      const match = pattern.exec(rest);
      if (match === null) break;
      // Everything up to and including the spelling's first character (the leftmost match, so no
      // whole spelling lies inside this piece); the spelling's remainder starts the next one.
      const cut = match.index + 1;
      out.push(...this.#tokenize(rest.slice(0, cut)));
      rest = rest.slice(cut);
    }
    if (rest !== "") out.push(...this.#tokenize(rest));
    return out;
  }
}
