import { describe, expect, it } from "vitest";
import { ControlTokenSplitter } from "../../../gpu-worker/chat/engine/prompt-builder.ts";
import { bindControlTokens } from "../../../gpu-worker/chat/grammar/grammar-control-tokens.ts";

const splitter = new ControlTokenSplitter(["<tool_call>", "</tool_call>", "<|channel|>"]);
const ids = new Map([
  ["<tool_call>", 7],
  ["</tool_call>", 8],
]);
const bind = (g: string) =>
  bindControlTokens(
    g,
    (t) => splitter.split(t),
    (t) => ids.get(t),
  );

describe("bindControlTokens", () => {
  it("turns a control token spelled in a literal into a token reference, keeping the rest literal", () => {
    expect(bind('root ::= "<tool_call>\\n" body "\\n</tool_call>"')).toBe('root ::= (<[7]> "\\n") body ("\\n" <[8]>)');
    expect(bind('root ::= "<tool_call>"?')).toBe("root ::= <[7]>?");
  });

  it("leaves literals without control tokens, character classes, comments and unknown tokens alone", () => {
    const g = 'root ::= "a\\"<b" [<"\\]] # "<tool_call>"\nx ::= "<|channel|>"';
    expect(bind(g)).toBe(g);
  });

  it("decodes the escapes a literal can hold before splitting", () => {
    expect(bind('r ::= "\\x3ctool_call>\\t"')).toBe('r ::= (<[7]> "\\t")');
  });
});
