import { describe, expect, it } from "vitest";
import { TokenizerInputError } from "../../../native/engine-types.ts";
import { checkTokenizerInput, longestRun, recursiveRunClasses } from "../../../native/tokenizer/tokenizer-guard.ts";

describe("longestRun", () => {
  it("counts the longest run of one bounded class, in code points", () => {
    expect(longestRun("ab}}}c----d", ["punctuation"])).toEqual({ length: 4, runClass: "punctuation" });
    expect(longestRun("12 3456", ["digit"])).toEqual({ length: 4, runClass: "digit" });
    expect(longestRun("aaaa}", ["punctuation"])).toEqual({ length: 1, runClass: "punctuation" });
    expect(longestRun("éééé", ["letter"])).toEqual({ length: 4, runClass: "letter" });
    expect(longestRun("٣٣٣", ["digit"]).length).toBe(3); // Arabic-Indic digits are \p{N}
    expect(longestRun("«»«»", ["punctuation"]).length).toBe(4);
    expect(longestRun("😀😀", ["punctuation"]).length).toBe(2); // So: a symbol
    expect(longestRun("}}}", []).length).toBe(0);
  });

  it("a class change ends a run", () => {
    expect(longestRun("}}1}}", ["punctuation", "digit"]).length).toBe(2);
  });
});

describe("checkTokenizerInput", () => {
  it("throws past the bound only for the classes the pre-tokenizer recurses over", () => {
    const classes = recursiveRunClasses("default");
    expect(() => checkTokenizerInput("}".repeat(11), classes, 10)).toThrow(TokenizerInputError);
    expect(() => checkTokenizerInput("}".repeat(10), classes, 10)).not.toThrow();
    expect(() => checkTokenizerInput("a".repeat(100), classes, 10)).not.toThrow();
    expect(() => checkTokenizerInput("}".repeat(100), recursiveRunClasses("qwen2"), 10)).not.toThrow();
  });

  it("bounds every class for a pre-tokenizer it does not know", () => {
    expect(recursiveRunClasses("some-new-pre")).toEqual(["punctuation", "digit", "letter", "space"]);
    expect(recursiveRunClasses(undefined)).toEqual(recursiveRunClasses("default"));
  });
});
