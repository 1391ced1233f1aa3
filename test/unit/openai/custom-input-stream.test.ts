/**
 * A custom tool's input streams as `response.custom_tool_call_input.delta` events while the call is
 * sampled: split anywhere (inside escapes and `\u` sequences included), the deltas join to exactly
 * the final input, and nothing is emitted for arguments that are not the wrapper.
 */
import { describe, expect, it } from "vitest";
import { customInput } from "../../../edge/protocols/responses/request/tools.ts";
import { CustomInputStream } from "../../../edge/protocols/responses/response/custom-input-stream.ts";

const PATCH = '*** Begin Patch\n*** Add File: a "q".txt\n+tab\there \\ é \u2028 ✓\n*** End Patch\n';

describe("CustomInputStream", () => {
  for (const size of [1, 2, 3, 5, 7, 64]) {
    it(`decodes the input as it arrives in ${size}-character chunks`, () => {
      const args = `{"input": ${JSON.stringify(PATCH).replace("é", "\\u00e9")}}`;
      const stream = new CustomInputStream();
      const deltas: string[] = [];
      for (let i = 0; i < args.length; i += size) {
        const delta = stream.push(args.slice(i, i + size));
        if (delta !== "") deltas.push(delta);
      }
      expect(deltas.length).toBeGreaterThan(size === 64 ? 0 : 3);
      expect(deltas.join("") + stream.rest(customInput(args))).toBe(PATCH);
      expect(stream.rest(customInput(args))).toBe("");
    });
  }

  it("a call cut before its closing quote hands out what was complete; rest adds nothing new", () => {
    const stream = new CustomInputStream();
    expect(stream.push('{"input": "ab\\')).toBe("ab");
    expect(stream.push("n")).toBe("\n");
    expect(stream.rest(customInput('{"input": "ab\\n'))).toBe("");
  });

  it("arguments that are not the wrapper emit nothing while streaming", () => {
    const stream = new CustomInputStream();
    expect(stream.push('{"other": "x"}')).toBe("");
    expect(stream.rest("whatever")).toBe("whatever");
  });
});
