import { describe, expect, it } from "vitest";
import { scanJsonObject } from "../../../gpu-worker/chat/parse/json-prefix.ts";

const FULL = '{"command": "echo é 😀 \\"x\\" \\u00e9", "n": -1.5e3, "a": [1, {"b": null}, []], "t": true, "o": {}}';

describe("scanJsonObject", () => {
  it("lets every prefix of an object be streamed and closed into valid JSON", () => {
    let last = 0;
    for (let k = 0; k <= FULL.length; k++) {
      const scan = scanJsonObject(FULL.slice(0, k));
      expect(scan.errorAt).toBeUndefined();
      expect(scan.safeEnd).toBeGreaterThanOrEqual(last); // streaming only ever moves forward
      last = scan.safeEnd;
      if (k === 0) continue;
      const closed: unknown = JSON.parse(FULL.slice(0, scan.safeEnd) + scan.closing);
      expect(typeof closed).toBe("object");
    }
    expect(scanJsonObject(FULL)).toEqual({ safeEnd: FULL.length, closing: "", end: FULL.length, errorAt: undefined });
  });

  it("invents nothing: a partial number, key or escape is held back, a string is closed where it stopped", () => {
    const close = (text: string) => {
      const s = scanJsonObject(text);
      return text.slice(0, s.safeEnd) + s.closing;
    };
    expect(close('{"a": 12')).toBe("{}");
    expect(close('{"a": 1, "b')).toBe('{"a": 1}');
    expect(close('{"a": "x\\u00')).toBe('{"a": "x"}');
    expect(close('{"a": "rm -rf /tm')).toBe('{"a": "rm -rf /tm"}');
    expect(close('{"a": [1, 2')).toBe('{"a": [1]}');
    expect(close('{"a": tru')).toBe("{}");
  });

  it("reports where the text stops being JSON, and the end of a complete object", () => {
    expect(scanJsonObject('{"a": 1,}').errorAt).toBe(8);
    expect(scanJsonObject('{"a" 1}').errorAt).toBe(5);
    expect(scanJsonObject("[1]").errorAt).toBe(0);
    expect(scanJsonObject('{"a": 1}\n</tool_call>').end).toBe(8);
  });
});
