/** The context size and KV type a worker takes from its flags and its model file (pure). */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../gpu-worker/config.ts";
import {
  describeContextSource,
  MODEL_FILE_CONTEXT_CAP,
  resolveContextSize,
} from "../../../gpu-worker/model-context.ts";

const DEV = { FRONTIER_DEV: "1" };

describe("resolveContextSize", () => {
  it("takes the file's context_length up to the cap, the flag over both", () => {
    const cap = MODEL_FILE_CONTEXT_CAP;
    expect(resolveContextSize({ flag: undefined, fileContextLength: 4096, cap })).toEqual({
      size: 4096,
      source: "file",
    });
    expect(resolveContextSize({ flag: undefined, fileContextLength: 131072, cap })).toEqual({
      size: 8192,
      source: "cap",
    });
    expect(resolveContextSize({ flag: 2048, fileContextLength: 131072, cap })).toEqual({ size: 2048, source: "flag" });
    expect(resolveContextSize({ flag: 32768, fileContextLength: 4096, cap })).toEqual({ size: 32768, source: "flag" });
  });

  it("says where the size came from", () => {
    expect(describeContextSource({ size: 8192, source: "cap" }, 131072)).toBe("cap (file context_length 131072)");
    expect(describeContextSource({ size: 4096, source: "file" }, 4096)).toBe("file context_length");
    expect(describeContextSource({ size: 8192, source: "flag" }, 4096)).toBe(
      "FRONTIER_CONTEXT_SIZE (above the file's context_length 4096)",
    );
  });
});

describe("the context and KV flags", () => {
  it("leaves the context to the file unless FRONTIER_CONTEXT_SIZE is set", () => {
    expect(loadConfig(DEV).contextSizeFlag).toBeUndefined();
    expect(loadConfig({ ...DEV, FRONTIER_CONTEXT_SIZE: "16384" }).contextSizeFlag).toBe(16384);
    expect(() => loadConfig({ ...DEV, FRONTIER_CONTEXT_SIZE: "1" })).toThrow(/at least 2 KV cells, got "1"/);
    expect(() => loadConfig({ ...DEV, FRONTIER_CONTEXT_SIZE: "8k" })).toThrow(/non-negative integer, got "8k"/);
  });

  it("takes f16, q8_0 or q4_0, the quantized ones with flash attention only", () => {
    expect(loadConfig(DEV).kvCacheType).toBe("f16");
    const fa = { ...DEV, FRONTIER_FLASH_ATTENTION: "on" };
    expect(loadConfig({ ...fa, FRONTIER_KV_TYPE: "q4_0" }).kvCacheType).toBe("q4_0");
    expect(() => loadConfig({ ...DEV, FRONTIER_KV_TYPE: "q8_0" })).toThrow(/needs FRONTIER_FLASH_ATTENTION=on/);
    expect(() => loadConfig({ ...fa, FRONTIER_KV_TYPE: "Q8_0" })).toThrow(
      /FRONTIER_KV_TYPE must be one of f16, q8_0, q4_0, got "Q8_0"/,
    );
  });
});
