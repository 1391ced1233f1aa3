/**
 * Trace hash ids as token ids. Each hash id maps to a fixed pseudo-random block of token ids, seeded
 * by the id (the same id always gives the same block); a request's prompt is its blocks in order,
 * the last one cut at its input length.
 *
 * Tokens are drawn from an alphabet of the generated model's normal (non-control) single-byte
 * tokens chosen so that text spelling them tokenizes back 1:1: no merge of the byte-level BPE
 * vocabulary (native/model/vocab.ts) joins two of them, nor the newline a chat template puts
 * before the content with any of them. So the same ids reach Frontier as text (its API takes no
 * token-id prompts) and llama-server as token ids.
 */
import { BYTE_TO_CHAR } from "../../native/model/byte-unicode.ts";
import { buildVocab } from "../../native/model/vocab.ts";

/** Token ids (= byte values in the generated vocabulary) whose text tokenizes 1:1 in any order. */
export function oneToOneAlphabet(vocabSize: number): number[] {
  const { merges } = buildVocab(vocabSize);
  const pairs = merges.map((m) => m.split(" ") as [string, string]);
  const chars = new Set<string>();
  for (let b = 0x21; b < 0x7f; b++) chars.add(BYTE_TO_CHAR[b] as string);
  const newline = BYTE_TO_CHAR[10];
  for (const [left, right] of pairs) if (left === newline) chars.delete(right);
  // Drop the character in the most merges among the remaining ones until no merge joins two of them.
  for (;;) {
    const count = new Map<string, number>();
    for (const [left, right] of pairs) {
      if (!chars.has(left) || !chars.has(right)) continue;
      count.set(left, (count.get(left) ?? 0) + 1);
      count.set(right, (count.get(right) ?? 0) + 1);
    }
    const worst = [...count].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    if (!worst) break;
    chars.delete(worst[0]);
  }
  return [...chars].map((c) => c.charCodeAt(0)).sort((a, b) => a - b);
}

/** The text of alphabet tokens (printable ASCII: byte value = token id = char code). */
export function tokensToText(tokens: readonly number[]): string {
  return String.fromCharCode(...tokens);
}

/** mulberry32: a small seeded PRNG, enough for fixed pseudo-random blocks. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class BlockTokens {
  readonly #blocks = new Map<number, number[]>();

  constructor(
    readonly alphabet: readonly number[],
    readonly blockTokens: number,
  ) {
    if (alphabet.length < 2) throw new Error("a block alphabet needs at least two tokens");
    if (!Number.isSafeInteger(blockTokens) || blockTokens < 1) throw new Error("block size must be a positive integer");
  }

  /** The block of hash id `id`: the same tokens every time. */
  block(id: number): readonly number[] {
    let block = this.#blocks.get(id);
    if (!block) {
      // Seed by the id (mixed so that neighbouring ids do not start alike).
      const random = seededRandom(Math.imul(id ^ 0x9e3779b9, 0x85ebca6b) ^ (id >>> 16));
      block = Array.from(
        { length: this.blockTokens },
        () => this.alphabet[Math.floor(random() * this.alphabet.length)] as number,
      );
      this.#blocks.set(id, block);
    }
    return block;
  }

  /** A prompt: the blocks of `hashIds` in order, cut at `inputLength` tokens. */
  prompt(hashIds: readonly number[], inputLength: number): number[] {
    if (inputLength > hashIds.length * this.blockTokens || inputLength <= (hashIds.length - 1) * this.blockTokens) {
      throw new Error(`${hashIds.length} blocks of ${this.blockTokens} cannot hold ${inputLength} tokens`);
    }
    return hashIds.flatMap((id) => this.block(id)).slice(0, inputLength);
  }
}
