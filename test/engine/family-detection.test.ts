/**
 * The chat format comes from the GGUF (issue 33): generated models carrying each family's real
 * vocabulary and special tokens, with the real template, without one, or with an unknown one,
 * read back by the worker's own `inspectModel` and detection rules; and a worker started on an
 * unknown template exits with an error naming what it found and how to override it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectFamily, UnknownChatTemplateError } from "../../gpu-worker/chat/detect-family.ts";
import { inspectModel } from "../../native/engine.ts";
import type { FamilyName } from "../../native/model/families.ts";
import { writeFamilyModel } from "../../native/model/family-model.ts";
import { startWorker } from "../../scripts/stack.ts";

const dir = mkdtempSync(join(tmpdir(), "frontier-detect-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const UNKNOWN = "{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}";

async function model(family: FamilyName, chatTemplate?: string | null, tag = "odd"): Promise<string> {
  const path = join(
    dir,
    `${family}-${chatTemplate === undefined ? "real" : chatTemplate === null ? "none" : tag}.gguf`,
  );
  await writeFamilyModel(path, family, "tiny", 1, chatTemplate);
  return path;
}

describe("format from the GGUF", () => {
  it("the real template decides, by its markers", async () => {
    const expected: Record<FamilyName, string> = {
      qwen3: "qwen3",
      "qwen3-coder": "qwen3-coder",
      "gpt-oss": "harmony",
      "deepseek-v3.1": "deepseek-v3.1",
      glm: "glm",
      "kimi-k2": "kimi-k2",
      "minimax-m2": "minimax-m2",
    };
    for (const [family, format] of Object.entries(expected) as [FamilyName, string][]) {
      const found = detectFamily(await inspectModel(await model(family)));
      expect(found.family, family).toBe(format);
      expect(found.rule, family).toMatch(/^template: /);
    }
  }, 120_000);

  it("a newer template of a family's vocabulary decides its variant (Qwen3.5, GLM-4.7, llama.cpp's Qwen3-Coder)", async () => {
    const newer: [FamilyName, string, string][] = [
      ["qwen3", "qwen3.5", "qwen3.5"],
      ["glm", "glm-4.7", "glm-4.7"],
      // llama.cpp's edit of Qwen3-Coder's template: no <think>, so not Qwen3.5 (test/unit/chat/newer-templates.test.ts).
      ["qwen3", "qwen3-coder-llama.cpp", "qwen3-coder"],
    ];
    for (const [family, template, format] of newer) {
      const text = readFileSync(
        new URL(`../../native/model/chat-templates/${template}.jinja`, import.meta.url),
        "utf8",
      );
      const info = await inspectModel(await model(family, text, template));
      expect(info.chatTemplate).toBe(text);
      expect(detectFamily(info).family, template).toBe(format);
    }
  }, 120_000);

  it("without a template, a control token only one family has decides; shared vocabularies are refused", async () => {
    const harmony = await inspectModel(await model("gpt-oss", null));
    expect(harmony.chatTemplate).toBeUndefined();
    expect(detectFamily(harmony)).toEqual({ family: "harmony", rule: 'no template; control token "<|channel|>"' });
    expect(detectFamily(await inspectModel(await model("glm", null))).family).toBe("glm");
    const qwen = await inspectModel(await model("qwen3", null));
    expect(qwen.specialTokens).toContain("<|im_start|>");
    expect(() => detectFamily(qwen)).toThrow(UnknownChatTemplateError);
    expect(() => detectFamily(qwen)).toThrow(/no chat template \(.*pre-tokenizer "qwen2"/);
  }, 120_000);

  it("a worker on an unknown template does not start, and says what it found and how to override", async () => {
    const path = await model("qwen3", UNKNOWN);
    const logs: string[] = [];
    const started = startWorker({ FRONTIER_MODEL_PATH: path, FRONTIER_CHECKPOINT_BUDGET_MB: "0" }, false, logs);
    await expect(started).rejects.toThrow(/exited with 1 before it was ready/);
    const failure = logs.find((line) => line.includes("worker failed to start")) ?? "";
    expect(failure).toContain("matches no supported family");
    expect(failure).toContain("[INST]");
    expect(failure).toContain("Set FRONTIER_CHAT_FORMAT");
  }, 120_000);
});
