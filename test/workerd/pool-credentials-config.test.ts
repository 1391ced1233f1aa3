/**
 * POOL_WORKER_TOKENS in both forms: the older digest alone (bound to its id, the allow-list and the
 * default ceiling) and the object { sha256, url, capacity, region }; malformed entries are ConfigErrors.
 */
import { describe, expect, it } from "vitest";
import { bindingAdmits, parseRegistration } from "../../edge/config/registration.ts";
import { ConfigError } from "../../edge/core/config-values.ts";

const A = "a".repeat(64);
const parse = (tokens: unknown, extra: Record<string, string> = {}) =>
  parseRegistration({ POOL_WORKER_TOKENS: JSON.stringify(tokens), ...extra }, false);

describe("POOL_WORKER_TOKENS", () => {
  it("reads the older digest form and the object form", () => {
    const config = parse(
      {
        old: A.toUpperCase(),
        exact: { sha256: A, url: "HTTP://10.0.0.5:50061/", capacity: 8, region: "weur" },
        range: { sha256: A, url: "10.0.1.0/24:50061,*.gpu.internal" },
      },
      { POOL_WORKER_CAPACITY: "16" },
    );
    expect(config.workerCredentials.get("old")?.binding).toEqual({
      id: "old",
      url: undefined,
      capacity: 16,
      region: undefined,
      source: "env",
    });
    expect(config.workerTokenHashes.get("old")).toBe(A);
    const exact = config.workerCredentials.get("exact")?.binding;
    expect(exact).toMatchObject({ url: "http://10.0.0.5:50061", capacity: 8, region: "weur" });
    const range = config.workerCredentials.get("range")?.binding;
    if (!exact || !range) throw new Error("missing bindings");
    expect(bindingAdmits(exact, "http://10.0.0.5:50061")).toBe(true);
    expect(bindingAdmits(exact, "http://10.0.0.5:50062")).toBe(false);
    expect(bindingAdmits(range, "http://10.0.1.77:50061")).toBe(true);
    expect(bindingAdmits(range, "http://10.0.2.77:50061")).toBe(false);
    expect(bindingAdmits(range, "http://a.gpu.internal:1")).toBe(true);
    expect(config.defaultWorkerCapacity).toBe(16);
    expect(parseRegistration({}, false).defaultWorkerCapacity).toBe(64);
  });

  it("refuses malformed credentials, naming the field", () => {
    for (const [tokens, field] of [
      [{ w: "plain" }, "POOL_WORKER_TOKENS.w"],
      [{ w: { sha256: A, url: "ftp://x" } }, "POOL_WORKER_TOKENS.w.url"],
      [{ w: { sha256: A, url: "10.0.0.0/40" } }, "POOL_WORKER_TOKENS.w.url"],
      [{ w: { sha256: A, capacity: 0 } }, "POOL_WORKER_TOKENS.w.capacity"],
      [{ w: { sha256: A, capacity: 1_000_001 } }, "POOL_WORKER_TOKENS.w.capacity"],
      [{ w: { sha256: A, region: "Not A Region" } }, "POOL_WORKER_TOKENS.w.region"],
      [{ "bad/id": A }, "not a worker id"],
    ] as const) {
      expect(() => parse(tokens)).toThrow(ConfigError);
      expect(() => parse(tokens)).toThrow(field);
    }
  });
});
