import { describe, expect, it } from "vitest";
import { HarmonyFormat } from "../../../gpu-worker/chat/families/harmony/harmony.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import { formatCapabilities } from "../../../gpu-worker/chat/format-capabilities.ts";

describe("formatCapabilities", () => {
  it("reads a thinking toggle and parallel calls off ChatML (Qwen3's think / no-think forms)", () => {
    expect(formatCapabilities(new ChatMlFormat())).toEqual({
      chatFormat: "chatml",
      thinkingToggle: true,
      maxCallsPerTurn: new ChatMlFormat().maxCallsPerTurn,
    });
    expect(new ChatMlFormat().maxCallsPerTurn).toBeGreaterThan(1);
  });

  it("finds no toggle where the model always reasons at its configured level (harmony), one call per turn", () => {
    expect(formatCapabilities(new HarmonyFormat())).toMatchObject({
      chatFormat: "harmony",
      thinkingToggle: false,
      maxCallsPerTurn: 1,
    });
  });

  it("follows the model: Qwen3-Coder has no thinking form, Qwen3.5 in the same markup does", () => {
    expect(formatCapabilities(new Qwen3CoderFormat({ thinking: false })).thinkingToggle).toBe(false);
    expect(formatCapabilities(new Qwen3CoderFormat({ thinking: true })).thinkingToggle).toBe(true);
  });
});
