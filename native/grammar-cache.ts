/** A small LRU of compiled GBNF grammars keyed by their text (compiling is not free). */
import type { Llama, LlamaGrammar } from "node-llama-cpp";
import { InvalidGrammarError } from "./engine-types.ts";

export class GrammarCache {
  private readonly entries = new Map<string, Promise<LlamaGrammar>>();
  constructor(
    private readonly llama: Llama,
    private readonly capacity = 16,
  ) {}

  /** The compiled grammar for `text` (root rule `root`). Rejects with InvalidGrammarError. */
  get(text: string): Promise<LlamaGrammar> {
    const hit = this.entries.get(text);
    if (hit !== undefined) {
      this.entries.delete(text);
      this.entries.set(text, hit);
      return hit;
    }
    const created = this.llama.createGrammar({ grammar: text }).catch((err: unknown) => {
      const reason = err instanceof Error ? err.message : String(err);
      throw new InvalidGrammarError(
        `invalid GBNF grammar (${reason}): ${text.length > 200 ? `${text.slice(0, 200)}...` : text}`,
        { cause: err },
      );
    });
    // A failed compile must not stay cached; the caller still sees the rejection via `created`.
    created.catch(() => {
      if (this.entries.get(text) === created) this.entries.delete(text);
    });
    this.entries.set(text, created);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
    return created;
  }

  clear(): void {
    this.entries.clear();
  }
}
