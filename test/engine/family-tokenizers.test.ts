/**
 * llama.cpp (through the engine) tokenizes each family's generated model exactly as the family's
 * own tokenizer (the @lenml package, a port of Hugging Face tokenizers) does, on a corpus of
 * awkward text. "Plain text" means special tokens are not parsed: the engine's `special: false`
 * against the reference with every added token the GGUF marks CONTROL removed from its
 * added-token matching (user-defined added tokens such as Qwen3's `<think>` are matched by both,
 * as in Hugging Face). Where llama.cpp differs, the exact case is asserted below as a known
 * difference, so an upgrade that changes it fails here.
 */
import { TokenizerLoader } from "@lenml/tokenizers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import { type Engine, GREEDY, type Token } from "../../native/engine-types.ts";
import { FAMILIES, FAMILY_NAMES, type FamilyName } from "../../native/model/families.ts";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import {
  buildFamilyVocab,
  type FamilyVocab,
  familyChatTemplate,
  familyTokenizerFiles,
} from "../../native/model/family-vocab.ts";
import { GgufTokenType } from "../../native/model/gguf-format.ts";
import { validateGguf } from "../../native/model/gguf-validate.ts";
import { FAMILY_CORPUS } from "./family-corpus.ts";

type FromPreTrained = Parameters<typeof TokenizerLoader.fromPreTrained>[0];
type ReferenceTokenizer = ReturnType<typeof TokenizerLoader.fromPreTrained>;

/** Corpus cases where llama.cpp 3.21.1 does not match the family's tokenizer, and why. */
const KNOWN_DIFFERENCES: Partial<Record<FamilyName, Readonly<Record<string, string>>>> = {
  qwen3: { "decomposed accents": "llama.cpp does not apply the tokenizer's NFC normalizer" },
  "gpt-oss": {
    devanagari: "llama.cpp's gpt-4o split regex leaves combining marks (\\p{M}) out of words",
  },
};

/**
 * Special-token ids later code (chat formats, grammars) relies on, per family. GLM's are the
 * Qwen3 BPE's size (151,643) plus the position in GLM-4.5's list (the real GLM-4.5 has 151,329 +).
 */
const SPECIAL_IDS: Readonly<Record<FamilyName, Readonly<Record<string, Token>>>> = {
  qwen3: {
    "<|endoftext|>": 151643,
    "<|im_start|>": 151644,
    "<|im_end|>": 151645,
    "<tool_call>": 151657,
    "</tool_call>": 151658,
    "<tool_response>": 151665,
    "</tool_response>": 151666,
    "<think>": 151667,
    "</think>": 151668,
  },
  "qwen3-coder": { "<|im_start|>": 151644, "<|im_end|>": 151645, "<tool_call>": 151657, "</tool_call>": 151658 },
  "gpt-oss": {
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|call|>": 200012,
  },
  "deepseek-v3.1": {
    "<｜begin▁of▁sentence｜>": 0,
    "<｜end▁of▁sentence｜>": 1,
    "<think>": 128798,
    "</think>": 128799,
    "<｜User｜>": 128803,
    "<｜Assistant｜>": 128804,
    "<｜tool▁calls▁begin｜>": 128806,
    "<｜tool▁calls▁end｜>": 128807,
    "<｜tool▁call▁begin｜>": 128808,
    "<｜tool▁call▁end｜>": 128809,
    "<｜tool▁outputs▁begin｜>": 128810,
    "<｜tool▁outputs▁end｜>": 128811,
    "<｜tool▁output▁begin｜>": 128812,
    "<｜tool▁output▁end｜>": 128813,
    "<｜tool▁sep｜>": 128814,
  },
  glm: {
    "<|endoftext|>": 151643,
    "[gMASK]": 151645,
    "<sop>": 151647,
    "<|system|>": 151649,
    "<|user|>": 151650,
    "<|assistant|>": 151651,
    "<|observation|>": 151652,
    "<think>": 151664,
    "</think>": 151665,
    "<tool_call>": 151666,
    "</tool_call>": 151667,
    "<tool_response>": 151668,
    "</tool_response>": 151669,
    "<arg_key>": 151670,
    "</arg_key>": 151671,
    "<arg_value>": 151672,
    "</arg_value>": 151673,
    "/nothink": 151674,
  },
  // Stand-ins on the Qwen3 BPE (151,643 tokens), the family's specials after it in families.ts order.
  "kimi-k2": {
    "[BOS]": 151643,
    "<|im_end|>": 151645,
    "<|im_user|>": 151646,
    "<|im_assistant|>": 151647,
    "<|im_system|>": 151651,
    "<|tool_calls_section_begin|>": 151652,
    "<|tool_call_begin|>": 151654,
    "<|tool_call_argument_begin|>": 151655,
    "<|tool_call_end|>": 151656,
    "<|im_middle|>": 151657,
    "<think>": 151662,
    "</think>": 151663,
  },
  "minimax-m2": {
    "]~b]": 151645,
    "]~!b[": 151646,
    "[e~[": 151647,
    "<think>": 151648,
    "</think>": 151649,
    "<minimax:tool_call>": 151650,
    "</minimax:tool_call>": 151651,
  },
};

/** The tokens of `SPECIAL_IDS` the GGUF types USER_DEFINED (not `special` in the tokenizer); the rest are CONTROL. */
const USER_DEFINED_IN_GGUF: Readonly<Record<FamilyName, readonly string[]>> = {
  qwen3: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"],
  "qwen3-coder": ["<tool_call>", "</tool_call>"],
  "gpt-oss": [],
  "deepseek-v3.1": ["<think>", "</think>"],
  glm: [],
  "kimi-k2": [],
  "minimax-m2": [],
};

interface Loaded {
  engine: Engine;
  vocab: FamilyVocab;
  /** The family's tokenizer with special (GGUF CONTROL) tokens treated as text. */
  reference: ReferenceTokenizer;
}

async function load(family: FamilyName): Promise<Loaded> {
  const path = await ensureFamilyModel(family, "tiny");
  const { tokenizerJson, tokenizerConfig } = await familyTokenizerFiles(family);
  const vocab = buildFamilyVocab(FAMILIES[family], tokenizerJson);
  const plain = {
    ...tokenizerJson,
    added_tokens: tokenizerJson.added_tokens.filter((t) => vocab.tokenTypes[t.id] !== GgufTokenType.CONTROL),
  };
  const reference = TokenizerLoader.fromPreTrained({
    tokenizerJSON: plain as unknown as FromPreTrained["tokenizerJSON"],
    tokenizerConfig: tokenizerConfig as FromPreTrained["tokenizerConfig"],
  });
  const engine = await createEngine({
    modelPath: path,
    contextSize: 256,
    sequences: 1,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 64,
  });
  return { engine, vocab, reference };
}

/** qwen3-coder shares qwen3's tokenizer; it is checked byte for byte against qwen3's GGUF below instead. */
const ENGINE_FAMILIES = FAMILY_NAMES.filter((f) => f !== "qwen3-coder");

for (const family of ENGINE_FAMILIES) {
  describe(`${family} vocabulary`, () => {
    let m: Loaded;
    const plain = (text: string): Token[] => m.engine.tokenize(text, { special: false });
    const ref = (text: string): number[] => m.reference.encode(text, { add_special_tokens: false });
    const known = KNOWN_DIFFERENCES[family] ?? {};

    beforeAll(async () => {
      m = await load(family);
    });
    afterAll(async () => {
      await m?.engine.dispose();
    });

    it("tokenizes every corpus text as the family's own tokenizer does", () => {
      const mismatched: string[] = [];
      for (const [name, text] of Object.entries(FAMILY_CORPUS)) {
        const same = JSON.stringify(plain(text)) === JSON.stringify(ref(text));
        if (name in known) expect(same, `${name} was a known difference: ${known[name]}`).toBe(false);
        else if (!same) mismatched.push(name);
      }
      expect(mismatched).toEqual([]);
      // The whole corpus at once too (boundaries between cases).
      const all = Object.entries(FAMILY_CORPUS)
        .filter(([name]) => !(name in known))
        .map(([, text]) => text)
        .join("\n");
      expect(plain(all)).toEqual(ref(all));
    });

    it("never turns text into a control token with special parsing off", () => {
      const control = new Set<number>();
      m.vocab.tokenTypes.forEach((type, id) => {
        if (type === GgufTokenType.CONTROL) control.add(id);
      });
      const spellings = [...m.vocab.added.keys()].filter((t) => control.has(m.vocab.added.get(t) ?? -1));
      for (const text of [...Object.values(FAMILY_CORPUS), spellings.join(""), `a ${spellings.join(" b ")} c`]) {
        const leaked = plain(text).filter((id) => control.has(id));
        expect(leaked, text.slice(0, 80)).toEqual([]);
      }
    });

    it("tokenizes each added token to its single id with special parsing", () => {
      for (const [text, id] of m.vocab.added) expect(m.engine.tokenize(text, { special: true }), text).toEqual([id]);
      for (const [text, id] of Object.entries(SPECIAL_IDS[family])) {
        expect(m.vocab.added.get(text), text).toBe(id);
        const type = USER_DEFINED_IN_GGUF[family].includes(text) ? GgufTokenType.USER_DEFINED : GgufTokenType.CONTROL;
        expect(m.vocab.tokenTypes[id], text).toBe(type);
      }
    });

    it("writes the family's pre-tokenizer, special ids and chat template into the GGUF", async () => {
      const summary = await validateGguf(m.engine.model.path);
      const spec = FAMILIES[family];
      expect(summary.metadata.get("tokenizer.ggml.pre")).toBe(spec.pre);
      expect(summary.eosToken).toBe(m.vocab.added.get(spec.special.eos));
      expect(m.engine.model.eosToken).toBe(m.vocab.added.get(spec.special.eos));
      const bos = spec.special.bos === undefined ? undefined : m.vocab.added.get(spec.special.bos);
      expect(m.engine.model.bosToken).toBe(bos);
      expect(summary.vocabSize).toBe(spec.paddedVocab ?? m.vocab.tokens.length);
      expect(m.engine.model.chatTemplate).toBe(await familyChatTemplate(family));
      expect(summary.fileSize).toBeLessThan(64 * 1024 * 1024);
    });

    it("runs: prefills rendered text and decodes greedily with the output tied to token_embd", async () => {
      const seq = await m.engine.acquireSequence();
      try {
        await seq.append(plain("Hello, world. A short prompt for a random model."));
        const out: Token[] = [];
        for await (const t of seq.generate({ ...GREEDY, maxTokens: 4 })) out.push(t);
        expect(out.length).toBeGreaterThan(0);
        for (const t of out) expect(t).toBeLessThan(m.vocab.tokens.length);
      } finally {
        seq.dispose();
      }
    });

    if (family === "qwen3") {
      it("known difference: decomposed accents (no NFC in llama.cpp); NFC input matches", () => {
        const text = FAMILY_CORPUS["decomposed accents"] ?? "";
        expect(plain(text)).not.toEqual(ref(text));
        expect(plain(text.normalize("NFC"))).toEqual(ref(text));
      });
    }

    if (family === "gpt-oss") {
      it("known difference: combining marks split Devanagari words", () => {
        // " दुनिया" is one token in gpt-oss; llama.cpp cuts it before each vowel sign / virama.
        expect(ref(" दुनिया")).toEqual([64593]);
        expect(plain(" दुनिया")).toEqual([2630, 11225, 3800, 519]);
        expect(m.engine.detokenize(plain(" दुनिया"))).toBe(" दुनिया");
      });

      it("keeps the five harmony control tokens llama.cpp retypes user-defined as text (not injectable)", () => {
        for (const text of ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>"]) {
          // llama.cpp alone would match these in plain text (it retypes them user-defined at load)...
          expect(m.engine.tokenize(text, { special: true }), text).toEqual([SPECIAL_IDS["gpt-oss"][text]]);
          // ...the engine keeps them text, tokenized as the family's own tokenizer does.
          expect(plain(text), text).toEqual(ref(text));
          expect(ref(text).length, text).toBeGreaterThan(1);
        }
        for (const text of ["<|return|>", "<|call|>", "<|startoftext|>", "<|endoftext|>"])
          expect(plain(text), text).toEqual(ref(text));
      });
    }
  });
}

describe("qwen3-coder vocabulary", () => {
  it("is qwen3's tokenizer byte for byte (so it tokenizes as qwen3's does), with its own chat template", async () => {
    const [coder, qwen3] = await Promise.all([
      ensureFamilyModel("qwen3-coder").then(validateGguf),
      ensureFamilyModel("qwen3").then(validateGguf),
    ]);
    expect(coder.tokens).toEqual(qwen3.tokens);
    expect(coder.tokenTypes).toEqual(qwen3.tokenTypes);
    expect(coder.merges).toEqual(qwen3.merges);
    for (const key of ["tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.add_bos_token"])
      expect(coder.metadata.get(key), key).toBe(qwen3.metadata.get(key));
    expect([coder.bosToken, coder.eosToken]).toEqual([qwen3.bosToken, qwen3.eosToken]);
    for (const [text, id] of Object.entries(SPECIAL_IDS["qwen3-coder"])) expect(coder.tokens[id], text).toBe(text);
    expect(coder.chatTemplate).toBe(await familyChatTemplate("qwen3-coder"));
  });
});
