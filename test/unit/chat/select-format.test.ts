import { describe, expect, it } from "vitest";
import { selectChatFormat } from "../../../gpu-worker/chat/select-format.ts";

describe("selectChatFormat", () => {
  it("picks by name", () => {
    expect(selectChatFormat("chatml", "<｜User｜>").name).toBe("chatml");
    expect(selectChatFormat("deepseek", undefined).name).toBe("deepseek");
  });

  it("guesses from the chat template, ChatML by default", () => {
    expect(selectChatFormat("auto", "{{'<｜User｜>' + message['content']}}").name).toBe("deepseek");
    expect(selectChatFormat("auto", "{{'<|im_start|>' + message['role']}}").name).toBe("chatml");
    expect(selectChatFormat("auto", undefined).name).toBe("chatml");
    expect(selectChatFormat("auto", "something else").name).toBe("chatml");
  });

  it("reports each format's end-of-turn marker", () => {
    expect(selectChatFormat("chatml", undefined).endOfTurnText).toBe("<|im_end|>");
    expect(selectChatFormat("deepseek", undefined).endOfTurnText).toBe("<｜end▁of▁sentence｜>");
  });
});
