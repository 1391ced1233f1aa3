import { describe, expect, it } from "vitest";
import { segmentsFrom } from "../../../gpu-worker/chat/engine/prompt-builder.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { agentConversation } from "./fixtures.ts";

describe("segmentsFrom", () => {
  const r = new ChatMlFormat().render(agentConversation());

  it("returns the rest of the prompt, cutting a plain segment", () => {
    for (const offset of [0, 14, r.messageOffsets[2] ?? 0, r.generationPrefixStart, r.text.length]) {
      const rest = segmentsFrom(r.segments, offset);
      expect(rest?.map((s) => s.text).join("")).toBe(r.text.slice(offset));
    }
    const cut = segmentsFrom(r.segments, r.messageOffsets[1] ?? 0);
    expect(cut?.[0]).toEqual({ text: "<|im_start|>", special: true });
    expect(cut?.[1]?.text.startsWith("user\n")).toBe(true);
  });

  it("refuses a cut inside a control token or past the end", () => {
    expect(segmentsFrom(r.segments, r.generationPrefixStart + 3)).toBeUndefined();
    expect(segmentsFrom(r.segments, r.text.length + 1)).toBeUndefined();
  });
});
