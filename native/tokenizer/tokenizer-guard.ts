/**
 * Guards llama.cpp's tokenizer against input that overflows the native stack. For most
 * pre-tokenizers llama.cpp splits text with hand-written loops, but where it has none (the
 * `default` one our generated models use, `deepseek-v3`, …) it falls back to `std::regex`, whose
 * matcher recurses once per character of a `+` repetition: a run of ~24,000 `}` (or digits)
 * segfaults the process on an 8 MB stack. Splitting such a run would change its tokens (BPE merges
 * across it), so a run longer than MAX_TOKENIZER_RUN is refused before llama.cpp sees it.
 */
import { TokenizerInputError } from "../engine-types.ts";

/** Character classes a `std::regex` `+` loop of some pre-tokenizer repeats over. */
export type RunClass = "punctuation" | "digit" | "letter" | "space";

/**
 * Longest run of one class accepted (measured: the `default` pre-tokenizer crashed at ~23,600
 * punctuation characters on an 8 MB main-thread stack; 4,096 leaves a margin of 5.7 there, 2.9 on a
 * 4 MB worker-thread stack).
 */
export const MAX_TOKENIZER_RUN = 4096;

/**
 * Which runs recurse, per `tokenizer.ggml.pre` (from llama.cpp's llama-vocab.cpp regex lists and
 * unicode.cpp's custom splitters). Pre-tokenizers whose every regex has a custom splitter are safe;
 * anything not listed gets every class bounded.
 */
const RECURSIVE_RUNS: Readonly<Record<string, readonly RunClass[]>> = {
  // "[\p{P}\$\+<=>\^~\|]+" and "\p{N}+" go to std::regex; the gpt2 regex has a custom splitter.
  default: ["punctuation", "digit"],
  "gpt-2": ["punctuation", "digit"],
  // CJK runs, "[\p{L}\p{M}]+", " ?[\p{P}\p{S}]+[\r\n]*", "\s+": all std::regex ("\p{N}{1,3}" is bounded).
  "deepseek-v3": ["letter", "punctuation", "space"],
  // Custom splitters for every regex (unicode_regex_split_custom_qwen2 / _llama3).
  qwen2: [],
  llama3: [],
  "llama-bpe": [],
  "llama-v3": [],
};

const ALL_CLASSES: readonly RunClass[] = ["punctuation", "digit", "letter", "space"];

export function recursiveRunClasses(pre: string | undefined): readonly RunClass[] {
  return RECURSIVE_RUNS[pre ?? "default"] ?? ALL_CLASSES;
}

const LETTER = /[\p{L}\p{M}]/u;
const DIGIT = /\p{N}/u;
const PUNCTUATION = /[\p{P}\p{S}]/u;
const SPACE = /\s/u;

function classOf(code: number, char: string): RunClass | undefined {
  if (code < 0x80) {
    if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) return "letter";
    if (code >= 0x30 && code <= 0x39) return "digit";
    if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) return "space";
    if (code > 0x20 && code < 0x7f) return "punctuation";
    return undefined;
  }
  if (LETTER.test(char)) return "letter";
  if (DIGIT.test(char)) return "digit";
  if (PUNCTUATION.test(char)) return "punctuation";
  if (SPACE.test(char)) return "space";
  return undefined;
}

/** The longest run of one of `classes` in `text` (in code points), with its class. */
export function longestRun(
  text: string,
  classes: readonly RunClass[],
): { length: number; runClass: RunClass | undefined } {
  let best = 0;
  let bestClass: RunClass | undefined;
  if (classes.length === 0) return { length: 0, runClass: undefined };
  let current: RunClass | undefined;
  let length = 0;
  for (const char of text) {
    const found = classOf(char.codePointAt(0) ?? 0, char);
    const cls = found !== undefined && classes.includes(found) ? found : undefined;
    if (cls !== undefined && cls === current) length++;
    else {
      current = cls;
      length = cls === undefined ? 0 : 1;
    }
    if (length > best) {
      best = length;
      bestClass = cls;
    }
  }
  return { length: best, runClass: bestClass };
}

/** Throws TokenizerInputError when `text` holds a run the model's pre-tokenizer would recurse over too deeply. */
export function checkTokenizerInput(text: string, classes: readonly RunClass[], max = MAX_TOKENIZER_RUN): void {
  // A text no longer than the bound cannot hold a longer run.
  if (text.length <= max || classes.length === 0) return;
  const run = longestRun(text, classes);
  if (run.length > max) {
    throw new TokenizerInputError(
      `text holds a run of ${run.length} ${run.runClass} characters in a row; this model's tokenizer accepts at most ${max}`,
    );
  }
}
