import { describe, expect, it } from "vitest";
import { alignSpans } from "../../../gpu-worker/continuation/sampled-spans.ts";

const texts = new Map<number, string>([
  [1, "assist"],
  [2, "ant\n"],
  [3, "<tool_call>"],
  [4, "look"],
  [5, "up"],
  [6, "<t"],
  [7, "ool_call>"],
  [8, "é"],
]);
const bytes = (t: number) => new TextEncoder().encode(texts.get(t) ?? "");
const plain = (text: string) => ({ text, special: false });
const control = (text: string) => ({ text, special: true });

describe("alignSpans", () => {
  it("gives each plain piece the tokens covering exactly its bytes", () => {
    expect(alignSpans([plain("assistant\n"), control("<tool_call>"), plain("lookup")], [1, 2, 3, 4, 5], bytes)).toEqual(
      [
        { text: "assistant\n", tokens: [1, 2] },
        { text: "lookup", tokens: [4, 5] },
      ],
    );
  });

  it("refuses a control piece the model spelled as text, and tokens past the pieces", () => {
    expect(alignSpans([plain("assistant\n"), control("<tool_call>")], [1, 2, 6, 7], bytes)).toBeUndefined();
    expect(alignSpans([plain("assistant\n")], [1, 2, 4], bytes)).toBeUndefined();
  });

  it("refuses a token across a piece boundary and bytes that differ", () => {
    expect(alignSpans([plain("assist"), plain("ant\n")], [1, 2], bytes)).toEqual([
      { text: "assist", tokens: [1] },
      { text: "ant\n", tokens: [2] },
    ]);
    expect(alignSpans([plain("assi"), plain("stant\n")], [1, 2], bytes)).toBeUndefined();
    expect(alignSpans([plain("e")], [8], bytes)).toBeUndefined();
  });
});
